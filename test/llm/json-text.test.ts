// How generate_object reads JSON out of a model's text, complete and partial.
import { describe, expect, it } from 'vitest'
import { parseJsonText, parsePartialJson } from '../../src/tools/generate-object/json-text.ts'

describe('parseJsonText', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['  [1, 2]\n', [1, 2]],
    ['```json\n{"a":1}\n```', { a: 1 }],
    ['```\n{"a":1}\n```\nHope that helps!', { a: 1 }],
    ['Here it is:\n```json\n{"a":[true]}\n```\n', { a: [true] }],
    ['the object you asked for: {"t": "x"} -- done', { t: 'x' }],
    ['true', true],
    ['"just a string"', 'just a string'],
    ['fine: [1] and more text', [1]],
  ])('%j', (text, value) => {
    expect(parseJsonText(text)).toEqual({ ok: true, value })
  })

  it.each([[''], ['{"a": '], ['no json here'], ['{"a": 1,}']])('refuses %j', (text) => {
    const result = parseJsonText(text)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(/^the answer is not valid JSON/)
  })
})

describe('parsePartialJson', () => {
  it.each([
    ['{"name": "Ad', { name: 'Ad' }],
    ['{"a": [1, 2', { a: [1, 2] }],
    ['```json\n{"a": {"b": tr', { a: { b: true } }],
    ['Sure! {"x": 1', { x: 1 }],
    ['[', []],
  ])('%j', (text, value) => {
    expect(parsePartialJson(text)).toEqual(value)
  })

  it('gives nothing before any JSON', () => {
    expect(parsePartialJson('')).toBeUndefined()
    expect(parsePartialJson('```json\n')).toBeUndefined()
  })
})
