// generate_object cases, run through the public `isoagent` entry in Node and, bundled, in
// workerd. Each case names its own model id: the fake serves that model its own script.
import {
  Agent,
  anthropic,
  memoryWorkspace,
  openAICompatible,
  type LanguageModel,
  type ToolErrorKind,
} from '../../adapters/index.ts'
import type { FakeStep } from './fake-provider.ts'

export type Protocol = 'openai' | 'anthropic'
type Mode = 'tool' | 'strict' | 'json' | 'prompt'

/** One case: the arguments, the fake's script, and what must come out. */
export interface ObjectCase {
  id: string
  protocol: Protocol
  args: Record<string, unknown>
  script: FakeStep[]
  expect: {
    exitCode: 0 | 1
    object?: unknown
    mode_used?: Mode
    repair_rounds?: number
    errorType?: ToolErrorKind['type']
    /** Requests the fake must have received. */
    requests: number
    /** At least this many `object_partial` deltas. */
    minPartials?: number
  }
}

/** What running a case gave. */
export interface CaseRecord {
  id: string
  exitCode: number
  output: string
  errorKind?: ToolErrorKind
  metadata?: Record<string, unknown>
  deltas: { delta: string; at: number }[]
}

export const PERSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'age', 'role', 'tags', 'kind', 'address', 'contact'],
  properties: {
    name: { type: 'string', minLength: 1 },
    age: { type: 'integer', minimum: 0 },
    role: { enum: ['admin', 'user'] },
    tags: { type: 'array', items: { type: 'string' } },
    kind: { const: 'person' },
    address: { $ref: '#/$defs/address' },
    contact: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
  $defs: {
    address: {
      type: 'object',
      additionalProperties: false,
      required: ['city'],
      properties: { city: { type: 'string' } },
    },
  },
}

export const ADA = {
  name: 'Ada Lovelace',
  age: 36,
  role: 'admin',
  tags: ['math', 'engines'],
  kind: 'person',
  address: { city: 'London' },
  contact: null,
}

const BAD_ADA = { ...ADA, age: -1, role: 'root' }
const NAME = 'person'

function reply(mode: Mode, value: unknown, extra: Partial<FakeStep> = {}): FakeStep {
  const json = JSON.stringify(value)
  if (mode === 'tool') return { toolCalls: [{ name: NAME, arguments: json }], ...extra }
  if (mode === 'prompt') return { text: `Here it is:\n\`\`\`json\n${json}\n\`\`\`\n`, ...extra }
  return { text: json, ...extra }
}

const base = { schema: PERSON_SCHEMA, prompt: 'Describe Ada Lovelace', schema_name: NAME }
const autoMode = (p: Protocol): Mode => (p === 'openai' ? 'strict' : 'tool')

function casesFor(p: Protocol): ObjectCase[] {
  const cases: ObjectCase[] = []
  for (const mode of ['tool', 'strict', 'json', 'prompt'] as const) {
    const supported = p === 'openai' || mode === 'tool' || mode === 'prompt'
    cases.push({
      id: `${p}-${mode}`,
      protocol: p,
      args: { ...base, mode },
      script: [reply(mode, ADA)],
      expect: supported
        ? { exitCode: 0, object: ADA, mode_used: mode, repair_rounds: 0, requests: 1 }
        : { exitCode: 1, errorType: 'unsupported', requests: 0 },
    })
  }
  cases.push(
    {
      id: `${p}-auto`,
      protocol: p,
      args: { ...base },
      script: [reply(autoMode(p), ADA)],
      expect: { exitCode: 0, object: ADA, mode_used: autoMode(p), repair_rounds: 0, requests: 1 },
    },
    {
      id: `${p}-repair-tool`,
      protocol: p,
      args: { ...base, mode: 'tool' },
      script: [reply('tool', BAD_ADA), reply('tool', ADA)],
      expect: { exitCode: 0, object: ADA, mode_used: 'tool', repair_rounds: 1, requests: 2 },
    },
    {
      id: `${p}-repair-invalid-json`,
      protocol: p,
      args: { ...base, mode: 'prompt' },
      script: [{ text: '{"name": "Ada", "age": ' }, reply('prompt', ADA)],
      expect: { exitCode: 0, object: ADA, mode_used: 'prompt', repair_rounds: 1, requests: 2 },
    },
    {
      id: `${p}-exhausted`,
      protocol: p,
      args: { ...base, mode: 'auto', max_repair_attempts: 1, include_raw_text: true },
      script: [reply(autoMode(p), BAD_ADA), reply(autoMode(p), { ...ADA, tags: 'none' })],
      expect: { exitCode: 1, errorType: 'invalid_argument', repair_rounds: 1, requests: 2 },
    },
    {
      id: `${p}-partials`,
      protocol: p,
      args: { ...base },
      script: [
        (() => {
          const json = JSON.stringify(ADA)
          const chunks: string[] = []
          for (let i = 0; i < json.length; i += 6) chunks.push(json.slice(i, i + 6))
          return autoMode(p) === 'tool'
            ? { toolCalls: [{ name: NAME, arguments: json, chunks }], delayMs: 20 }
            : { text: json, chunks, delayMs: 20 }
        })(),
      ],
      expect: { exitCode: 0, object: ADA, mode_used: autoMode(p), requests: 1, minPartials: 3 },
    },
    {
      id: `${p}-timeout`,
      protocol: p,
      args: { ...base, timeout_ms: 1000 },
      script: [{ ...reply(autoMode(p), ADA), delayMs: 300 }],
      expect: { exitCode: 1, errorType: 'timeout', requests: 1 },
    },
    {
      id: `${p}-array-root`,
      protocol: p,
      args: {
        schema: {
          type: 'array',
          items: { $ref: '#/$defs/n' },
          minItems: 2,
          $defs: { n: { type: 'integer' } },
        },
        prompt: 'Two numbers',
        schema_name: NAME,
      },
      script: [reply(autoMode(p), { value: [1, 2] })],
      expect: {
        exitCode: 0,
        object: [1, 2],
        mode_used: autoMode(p),
        repair_rounds: 0,
        requests: 1,
      },
    },
    {
      id: `${p}-rate-limited`,
      protocol: p,
      args: { ...base },
      script: [{ status: 429, headers: { 'retry-after': '60' } }],
      expect: { exitCode: 1, errorType: 'rate_limited', requests: 1 },
    },
  )
  return cases
}

/** Every case, both protocols, plus refused arguments. */
export const OBJECT_CASES: ObjectCase[] = [
  ...casesFor('openai'),
  ...casesFor('anthropic'),
  {
    id: 'openai-schema-too-large',
    protocol: 'openai',
    args: {
      schema: { type: 'object', description: 'x'.repeat(65_536) },
      prompt: 'p',
    },
    script: [],
    expect: { exitCode: 1, errorType: 'invalid_argument', requests: 0 },
  },
  {
    id: 'openai-remote-ref',
    protocol: 'openai',
    args: { schema: { $ref: 'https://example.com/s.json' }, prompt: 'p' },
    script: [],
    expect: { exitCode: 1, errorType: 'invalid_argument', requests: 0 },
  },
  {
    id: 'openai-dangling-ref',
    protocol: 'openai',
    args: {
      schema: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      prompt: 'p',
    },
    script: [],
    expect: { exitCode: 1, errorType: 'invalid_argument', requests: 0 },
  },
  {
    id: 'openai-self-ref',
    protocol: 'openai',
    args: { schema: { anyOf: [{ $ref: '#' }] }, prompt: 'p' },
    script: [],
    expect: { exitCode: 1, errorType: 'invalid_argument', requests: 0 },
  },
  {
    id: 'openai-bad-name',
    protocol: 'openai',
    args: { ...base, schema_name: 'has space' },
    script: [],
    expect: { exitCode: 1, errorType: 'invalid_argument', requests: 0 },
  },
  {
    id: 'openai-bad-timeout',
    protocol: 'openai',
    args: { ...base, timeout_ms: 10 },
    script: [],
    expect: { exitCode: 1, errorType: 'invalid_argument', requests: 0 },
  },
]

function modelFor(c: ObjectCase, baseURL: string): LanguageModel {
  const options = { baseURL, model: c.id, apiKey: 'k', retryDelayMs: 10, maxRetryDelayMs: 5000 }
  return c.protocol === 'openai' ? openAICompatible(options) : anthropic(options)
}

/** Run one case against the fake at `baseURL`, through a session over a memory workspace. */
export async function runObjectCase(c: ObjectCase, baseURL: string): Promise<CaseRecord> {
  const session = await Agent.create({ model: modelFor(c, baseURL) }).session(memoryWorkspace())
  const stop = new AbortController()
  const deltas: CaseRecord['deltas'] = []
  const events = session.events({ signal: stop.signal })
  const collecting = (async () => {
    for await (const e of events) {
      if (e.type === 'tool_output_delta') deltas.push({ delta: e.delta, at: e.timestamp })
      if (e.type === 'tool_end') break
    }
  })()
  const result = await session.tool('generate_object', c.args)
  await Promise.race([collecting, new Promise((r) => setTimeout(r, 500))])
  stop.abort()
  await session.close()
  return {
    id: c.id,
    exitCode: result.exitCode,
    output: result.output,
    ...(result.errorKind ? { errorKind: result.errorKind } : {}),
    ...(result.metadata ? { metadata: result.metadata } : {}),
    deltas,
  }
}

/** Run every case (sequentially: deadlines stay honest on a busy machine). */
export async function runObjectCases(baseURL: string): Promise<CaseRecord[]> {
  const records: CaseRecord[] = []
  for (const c of OBJECT_CASES) records.push(await runObjectCase(c, baseURL))
  return records
}
