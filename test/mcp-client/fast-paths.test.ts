// Issue 29 (stdio bench levers): the two hand-written fast paths of an MCP call never accept
// what the full check refuses. `fastSchemaCheck` answers "certainly valid" only where the
// interpreting validator (@cfworker/json-schema) agrees; `plainMessage` accepts a stdout line's
// message only where the SDK's JSONRPCMessageSchema does.
import { Validator } from '@cfworker/json-schema'
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { plainMessage } from '../../adapters/node/stdio-mcp-transport.ts'
import type { JsonSchema } from '../../src/kernel/tool-spec.ts'
import { fastSchemaCheck } from '../../src/mcp-client/fast-schema-check.ts'

const flat: JsonSchema = {
  type: 'object',
  properties: {
    text: { type: 'string', description: 'd' },
    n: { type: 'number' },
    i: { type: 'integer' },
    b: { type: 'boolean' },
  },
  required: ['text'],
  $schema: 'http://json-schema.org/draft-07/schema#',
}
const closed: JsonSchema = { ...flat, additionalProperties: false }
const argsCases: unknown[] = [
  { text: 'x' },
  { text: 'x', n: 1.5, i: 2, b: true },
  { text: 'x', extra: 1 },
  {},
  { text: 1 },
  { text: 'x', i: 1.5 },
  { text: 'x', n: '1' },
  { text: 'x', b: 'true' },
  { text: undefined },
  { text: 'x', n: Number.NaN },
  { text: 'x', constructor: 'c' },
  null,
  [],
  'x',
  JSON.parse('{"text":"x","__proto__":1}'),
]

describe('fastSchemaCheck', () => {
  it('says "certainly valid" only when the validator agrees, and for plain valid calls', () => {
    for (const schema of [flat, closed]) {
      const fast = fastSchemaCheck(schema)!
      const full = new Validator(schema as never, '2020-12', true)
      for (const args of argsCases)
        if (fast(args)) expect(full.validate(args).valid, JSON.stringify(args)).toBe(true)
      expect(fast({ text: 'x' })).toBe(true)
      expect(fast({ text: 'x', n: 1.5, i: 2, b: false })).toBe(true)
    }
    expect(fastSchemaCheck(flat)!({ text: 'x', extra: 1 })).toBe(true)
    expect(fastSchemaCheck(closed)!({ text: 'x', extra: 1 })).toBe(false)
  })

  it('leaves every other schema to the validator', () => {
    const others: JsonSchema[] = [
      { type: 'object', properties: { s: { type: 'string', minLength: 2 } } },
      { type: 'object', properties: { s: { enum: ['a'] } } },
      { type: 'object', properties: { o: { type: 'object' } } },
      { type: 'object', properties: { s: { type: ['string', 'null'] } } },
      { type: 'object', additionalProperties: { type: 'string' } },
      { type: 'object', properties: {}, allOf: [] },
      { type: 'object', properties: { s: { $ref: '#/$defs/x' } } },
    ]
    for (const schema of others)
      expect(fastSchemaCheck(schema), JSON.stringify(schema)).toBe(undefined)
  })
})

describe('plainMessage', () => {
  const accepted = (v: unknown) => JSONRPCMessageSchema.safeParse(v).success
  const cases: unknown[] = [
    { jsonrpc: '2.0', id: 1, result: { content: [] } },
    { jsonrpc: '2.0', id: 'a', result: {} },
    { jsonrpc: '2.0', id: 1, result: { _meta: { x: 1 } } },
    { jsonrpc: '2.0', id: 1, result: {}, extra: true },
    { jsonrpc: '2.0', id: 1.5, result: {} },
    { jsonrpc: '2.0', id: 2 ** 60, result: {} },
    { jsonrpc: '2.0', id: null, result: {} },
    { jsonrpc: '1.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 1, result: [] },
    { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } },
    { jsonrpc: '2.0', id: 3, method: 'ping' },
    { jsonrpc: '2.0', id: 3, method: 'ping', params: [] },
    { jsonrpc: '2.0', id: 3, method: 'ping', params: { _meta: 1 } },
    { jsonrpc: '2.0', id: 3, method: 1 },
    { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'm' } },
    { jsonrpc: '2.0', id: 3, method: 'x', result: {} },
    { foo: 1 },
    null,
  ]
  it('accepts only what the SDK schema accepts, and the plain shapes of a call', () => {
    for (const v of cases) if (plainMessage(v)) expect(accepted(v), JSON.stringify(v)).toBe(true)
    expect(plainMessage(cases[0])).toBe(true)
    expect(plainMessage(cases[9])).toBe(true)
    expect(plainMessage(cases[11])).toBe(true)
  })
})
