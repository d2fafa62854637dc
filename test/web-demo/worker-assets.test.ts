// The Worker serves the built web demo as static assets (wrangler.toml `[assets]`) while /v1/*
// and /mcp still reach the Worker: the bundle wrangler deploys, in workerd through Miniflare.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  buildWorker,
  runWorker,
  WEB_DEMO_DIR,
  type RunningWorker,
  type WorkerBundle,
} from '../http/worker-bundle.ts'

const toml = readFileSync(fileURLToPath(new URL('../../wrangler.toml', import.meta.url)), 'utf8')
const runWorkerFirst = JSON.parse(
  /^run_worker_first\s*=\s*(\[.*\])$/m.exec(toml)?.[1] ?? '[]',
) as string[]

let bundle: WorkerBundle
let worker: RunningWorker
const TOKEN = 'worker-demo-token-0123'

beforeAll(async () => {
  bundle = await buildWorker()
  worker = await runWorker(
    bundle,
    { ISOAGENT_TOKEN: TOKEN },
    {
      extra: {
        assets: {
          directory: WEB_DEMO_DIR,
          routerConfig: { has_user_worker: true, static_routing: { user_worker: runWorkerFirst } },
        },
      },
    },
  )
}, 180_000)

afterAll(async () => {
  await worker?.close()
  bundle?.remove()
})

describe('the Worker serves the web demo', () => {
  it('routes the API and MCP to the Worker in wrangler.toml', () => {
    expect(toml).toMatch(/^\[assets\]\ndirectory = "\.\/dist\/web-demo"$/m)
    expect(runWorkerFirst).toEqual(['/v1/*', '/mcp', '/mcp/*'])
  })

  it('answers / with the demo’s index.html and its assets with their types', async () => {
    const index = await fetch(`${worker.url}/`)
    expect(index.status).toBe(200)
    expect(index.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await index.text()
    expect(html).toBe(readFileSync(join(WEB_DEMO_DIR, 'index.html'), 'utf8'))
    const wasm = readdirSync(join(WEB_DEMO_DIR, 'assets')).find((f) => f.endsWith('.wasm'))!
    const response = await fetch(`${worker.url}/assets/${wasm}`)
    expect(response.headers.get('content-type')).toBe('application/wasm')
    expect((await response.arrayBuffer()).byteLength).toBe(
      readFileSync(join(WEB_DEMO_DIR, 'assets', wasm)).byteLength,
    )
  })

  it('still answers the API from the Worker, token and all', async () => {
    expect(await (await fetch(`${worker.url}/v1/health`)).json()).toMatchObject({
      ok: true,
      runtime: 'workerd',
    })
    expect((await fetch(`${worker.url}/v1/sessions`, { method: 'POST' })).status).toBe(401)
    const created = await fetch(`${worker.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    })
    expect(created.status).toBe(201)
    expect((await fetch(`${worker.url}/mcp`, { method: 'POST', body: '{}' })).status).toBe(401)
  })
})
