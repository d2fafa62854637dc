// The expectations of a generate_object case, checked on its record and the fake's requests
// (the same checks for the Node run and the workerd run).
import { expect } from 'vitest'
import type { CaseRecord, ObjectCase } from './generate-object-cases.ts'
import type { FakeRequest } from './fake-provider.ts'

const PARTIAL_INTERVAL_MS = 100

export function checkObjectCase(c: ObjectCase, record: CaseRecord, all: FakeRequest[]): void {
  const requests = all.filter((r) => r.body.model === c.id)
  const where = `case ${c.id}`
  expect(record.exitCode, where).toBe(c.expect.exitCode)
  expect(requests.length, where).toBe(c.expect.requests)
  const partials = record.deltas.filter((d) => d.delta.startsWith('{"object_partial":'))
  const finals = record.deltas.filter((d) => d.delta.startsWith('{"final":'))
  for (let i = 1; i < partials.length; i++)
    expect(partials[i]!.at - partials[i - 1]!.at, `${where}: partial gap`).toBeGreaterThanOrEqual(
      PARTIAL_INTERVAL_MS,
    )
  for (const d of record.deltas) expect(() => JSON.parse(d.delta) as unknown, where).not.toThrow()
  if (c.expect.minPartials !== undefined)
    expect(partials.length, `${where}: partials`).toBeGreaterThanOrEqual(c.expect.minPartials)
  if (c.expect.exitCode === 0) {
    const meta = record.metadata!
    expect(meta.object, where).toEqual(c.expect.object)
    expect(JSON.parse(record.output), where).toEqual({
      object: c.expect.object,
      repair_rounds: meta.repair_rounds,
      mode_used: meta.mode_used,
      usage: meta.usage,
    })
    if (c.expect.mode_used) expect(meta.mode_used, where).toBe(c.expect.mode_used)
    if (c.expect.repair_rounds !== undefined)
      expect(meta.repair_rounds, where).toBe(c.expect.repair_rounds)
    const usage = meta.usage as { input_tokens: number; output_tokens: number }
    expect(usage.input_tokens, where).toBe(11 * requests.length)
    expect(finals, where).toHaveLength(1)
    expect(record.deltas.at(-1), where).toBe(finals[0])
    expect(JSON.parse(finals[0]!.delta), where).toEqual({ final: c.expect.object })
    if (partials.length > 0) {
      const last = JSON.parse(partials.at(-1)!.delta) as { object_partial: unknown }
      expect(typeof last.object_partial, where).toBe(typeof c.expect.object)
    }
    checkRequestShape(c, meta.mode_used as string, requests[0]!)
  } else {
    expect(record.errorKind?.type, where).toBe(c.expect.errorType)
    expect(record.metadata?.object, `${where}: no object on failure`).toBeUndefined()
    expect(finals, where).toHaveLength(0)
    if (c.expect.repair_rounds !== undefined)
      expect(record.metadata?.repair_rounds, where).toBe(c.expect.repair_rounds)
  }
  if (c.expect.repair_rounds !== undefined && c.expect.repair_rounds > 0) {
    const second = JSON.stringify(requests[1]!.body.messages)
    expect(second, `${where}: the errors go back to the model`).toMatch(/not (a )?valid/)
    if (!c.id.includes('invalid-json')) expect(second, where).toContain('/age')
    else expect(second, where).toContain('not valid JSON')
  }
}

function checkRequestShape(c: ObjectCase, mode: string, request: FakeRequest): void {
  const body = request.body
  const where = `case ${c.id}: request`
  const system =
    c.protocol === 'openai'
      ? String((body.messages as { content: string }[])[0]!.content)
      : String(body.system)
  if (mode === 'tool') {
    expect(body.tool_choice, where).toEqual(
      c.protocol === 'openai'
        ? { type: 'function', function: { name: 'person' } }
        : { type: 'tool', name: 'person' },
    )
    expect(JSON.stringify(body.tools), where).toContain('"person"')
  } else {
    expect(body.tools, where).toBeUndefined()
  }
  if (mode === 'strict') {
    const format = body.response_format as {
      type: string
      json_schema: { strict: boolean; name: string }
    }
    expect(format.type, where).toBe('json_schema')
    expect(format.json_schema.strict, where).toBe(true)
    expect(format.json_schema.name, where).toBe('person')
  } else if (mode === 'json') {
    expect(body.response_format, where).toEqual({ type: 'json_object' })
    expect(system, where).toContain('JSON Schema')
  } else {
    expect(body.response_format, where).toBeUndefined()
  }
  if (mode === 'prompt') expect(system, where).toContain('"additionalProperties":false')
}
