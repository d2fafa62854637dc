// The HTTP suite against the Worker as wrangler bundles it, in workerd (Miniflare): sessions in
// Durable Objects, the workspace from an R2 binding, S3 settings (s3rver) or memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startS3rver, type S3rverHandle } from '../s3/server.ts'
import { fuzzCases } from './fuzz-cases.ts'
import { httpCases, type CaseServer, type CaseServerConfig } from './http-cases.ts'
import { workflowCases } from './workflow-cases.ts'
import { buildWorker, runWorker, type WorkerBundle } from './worker-bundle.ts'

let bundling: Promise<WorkerBundle> | undefined
const bundle = () => (bundling ??= buildWorker())
let s3rver: Promise<S3rverHandle> | undefined
const S3_BUCKET = 'worker-bucket'
let prefixes = 0

afterAll(async () => {
  await Promise.all([bundling?.then((b) => b.remove()), s3rver?.then((s) => s.close())])
})

const configVars = (config: CaseServerConfig): Record<string, string> => ({
  ISOAGENT_TOKEN: config.token,
  ISOAGENT_PERMISSIONS: JSON.stringify(config.permissions),
  ...(config.maxSessions !== undefined
    ? { ISOAGENT_MAX_SESSIONS: String(config.maxSessions) }
    : {}),
  ...(config.sessionIdleMs !== undefined
    ? { ISOAGENT_SESSION_IDLE_MS: String(config.sessionIdleMs) }
    : {}),
  ...(config.workflows ? { ISOAGENT_WORKFLOWS: 'object' } : {}),
  ...(config.model
    ? {
        MODEL_PROVIDER: config.model.protocol,
        MODEL_BASE_URL: config.model.baseURL,
        MODEL_API_KEY: 'sk-test',
        MODEL_NAME: 'fake-1',
      }
    : {}),
})

function starter(kind: 'r2' | 's3' | 'memory') {
  return async (config: CaseServerConfig): Promise<CaseServer> => {
    const vars = configVars(config)
    if (kind === 's3') {
      const s3 = await (s3rver ??= startS3rver([S3_BUCKET]))
      Object.assign(vars, {
        S3_BUCKET,
        S3_ENDPOINT: s3.endpoint,
        S3_PREFIX: `run-${++prefixes}/`,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
      })
    }
    const worker = await runWorker(await bundle(), vars, {
      r2: kind === 'r2',
      ...(config.workflows ? { sqlite: true } : {}),
    })
    return { baseUrl: worker.url, close: () => worker.close() }
  }
}

const STORE_TOOLS = [
  'read',
  'write',
  'edit',
  'patch',
  'ls',
  'search',
  'web_fetch',
  'web_search',
  'batch',
  'program',
]

httpCases('Worker in workerd, R2 binding', starter('r2'), { tools: STORE_TOOLS })
workflowCases('Worker in workerd, R2 binding, runs in the session object', starter('r2'), {
  sharedWorkspace: false,
})
httpCases('Worker in workerd, S3 settings (s3rver)', starter('s3'), {
  tools: STORE_TOOLS,
  modelProtocol: 'anthropic',
})
httpCases('Worker in workerd, memory per session', starter('memory'), {
  tools: [
    'read',
    'write',
    'edit',
    'patch',
    'ls',
    'search',
    'git',
    'web_fetch',
    'web_search',
    'batch',
    'program',
  ],
  sharedWorkspace: false,
})
fuzzCases('Worker in workerd, R2 binding', starter('r2'))

describe('Worker bindings and Durable Objects', () => {
  const TOKEN = 'worker-token-0123456789'
  const auth = { authorization: `Bearer ${TOKEN}` }
  beforeAll(async () => {
    await bundle()
  })

  it('refuses to serve (503 not_configured) while ISOAGENT_TOKEN is unset', async () => {
    for (const vars of [{}, { ISOAGENT_TOKEN: '' }] as Record<string, string>[]) {
      const worker = await runWorker(await bundle(), vars, { r2: true })
      try {
        for (const [method, path] of [
          ['GET', '/v1/health'],
          ['GET', '/'],
          ['POST', '/v1/sessions'],
          ['GET', '/v1/sessions/x/tools'],
        ] as const) {
          const res = await fetch(worker.url + path, { method, headers: auth })
          expect(res.status, `${method} ${path}`).toBe(503)
          const body = (await res.json()) as { error: { code: string; message: string } }
          expect(body.error.code).toBe('not_configured')
          expect(body.error.message).toContain('ISOAGENT_TOKEN')
        }
      } finally {
        await worker.close()
      }
    }
  })

  it('refuses bad settings with 503 and names the binding', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ ISOAGENT_MAX_SESSIONS: 'lots' }, 'ISOAGENT_MAX_SESSIONS'],
      [{ ISOAGENT_SESSION_IDLE_MS: '-1' }, 'ISOAGENT_SESSION_IDLE_MS'],
      [{ ISOAGENT_PERMISSIONS: '{"ask": "write(*)"}' }, 'ISOAGENT_PERMISSIONS'],
      [{ ISOAGENT_PERMISSIONS: 'ask everything' }, 'ISOAGENT_PERMISSIONS'],
    ]
    for (const [vars, name] of cases) {
      const worker = await runWorker(await bundle(), { ISOAGENT_TOKEN: TOKEN, ...vars })
      try {
        const res = await fetch(worker.url + '/v1/sessions', { method: 'POST', headers: auth })
        expect(res.status).toBe(503)
        expect(((await res.json()) as { error: { message: string } }).error.message).toContain(name)
      } finally {
        await worker.close()
      }
    }
  })

  it('answers 503 workspace_unavailable when S3 settings lack credentials', async () => {
    const worker = await runWorker(await bundle(), {
      ISOAGENT_TOKEN: TOKEN,
      S3_BUCKET: 'b',
      S3_ENDPOINT: 'http://127.0.0.1:9',
    })
    try {
      const res = await fetch(worker.url + '/v1/sessions', { method: 'POST', headers: auth })
      expect(res.status).toBe(503)
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe('workspace_unavailable')
      expect(body.error.message).toContain('S3_ACCESS_KEY_ID')
      // The refused session gave its slot back: the registry holds none.
      const mf = worker.mf
      const registry = await mf.getDurableObjectNamespace('REGISTRY')
      const stub = registry.get(registry.idFromName('isoagent:sessions'))
      const reserve = await stub.fetch('https://registry/reserve', {
        method: 'POST',
        body: JSON.stringify({ id: 'probe', max: 1, leaseMs: 1000 }),
      })
      expect(reserve.status).toBe(200)
    } finally {
      await worker.close()
    }
  })

  it('reports runtime workerd, and an idle session closed by its alarm frees its slot', async () => {
    const worker = await runWorker(
      await bundle(),
      { ISOAGENT_TOKEN: TOKEN, ISOAGENT_MAX_SESSIONS: '1', ISOAGENT_SESSION_IDLE_MS: '300' },
      { r2: true },
    )
    try {
      const health = (await (await fetch(worker.url + '/v1/health')).json()) as { runtime: string }
      expect(health.runtime).toBe('workerd')
      const open = () => fetch(worker.url + '/v1/sessions', { method: 'POST', headers: auth })
      const first = await open()
      expect(first.status).toBe(201)
      const { id } = (await first.json()) as { id: string }
      const full = await open()
      expect(full.status).toBe(429)
      await full.body?.cancel()
      // Nobody asks for the first session again: only its object's alarm can close it.
      await new Promise((r) => setTimeout(r, 1200))
      const second = await open()
      expect(second.status).toBe(201)
      await second.body?.cancel()
      const gone = await fetch(`${worker.url}/v1/sessions/${id}`, { headers: auth })
      expect(gone.status).toBe(404)
      await gone.body?.cancel()
    } finally {
      await worker.close()
    }
  })

  it('answers every over-limit body with 413, never a reset connection', async () => {
    const worker = await runWorker(await bundle(), { ISOAGENT_TOKEN: TOKEN })
    try {
      const created = await fetch(worker.url + '/v1/sessions', { method: 'POST', headers: auth })
      const { id } = (await created.json()) as { id: string }
      const big = JSON.stringify({ args: { file_path: 'b.txt', content: 'x'.repeat(8 << 20) } })
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${worker.url}/v1/sessions/${id}/tools/write`, {
          method: 'POST',
          headers: auth,
          body: big,
        })
        await res.body?.cancel()
        statuses.push(res.status)
      }
      expect(statuses).toEqual([413, 413, 413, 413, 413, 413])
    } finally {
      await worker.close()
    }
  })

  it('keeps a memory workspace per session, across its requests, and runs program on it', async () => {
    const worker = await runWorker(await bundle(), { ISOAGENT_TOKEN: TOKEN })
    try {
      const call = async (id: string, tool: string, args: unknown) => {
        const res = await fetch(`${worker.url}/v1/sessions/${id}/tools/${tool}`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ args }),
        })
        return (await res.json()) as { exitCode: number; output: string }
      }
      const open = async () => {
        const res = await fetch(worker.url + '/v1/sessions', { method: 'POST', headers: auth })
        return ((await res.json()) as { id: string }).id
      }
      const a = await open()
      const b = await open()
      expect((await call(a, 'write', { file_path: 'x.txt', content: 'mine' })).exitCode).toBe(0)
      expect((await call(a, 'read', { file_path: 'x.txt' })).output).toContain('mine')
      expect((await call(b, 'read', { file_path: 'x.txt' })).exitCode).toBe(1)
      // program runs in QuickJS from the bundle's own CompiledWasm module, its tools on the
      // session's workspace.
      const program = await call(a, 'program', {
        source: "const r = await ctx.tool('read', { file_path: 'x.txt' }); return r.output.length",
      })
      expect(program).toMatchObject({ exitCode: 0 })
      expect(program.output).toContain('11')
    } finally {
      await worker.close()
    }
  })
})
