// The program suite in workerd (Miniflare): the cases bundled into a Worker with Node built-ins
// forbidden; QuickJS's .wasm is a CompiledWasm module the Worker imports (workerd compiles no
// WebAssembly from bytes) and hands to its sessions as `quickjs`.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Plugin } from 'esbuild'
import { bundle, nodeSpecifiers } from '../runtime/bundle.ts'
import { HOSTILE } from './hostile-cases.ts'
import { programCases, type ProgramCaseResult } from './program-cases.ts'

const WORKER = `
import wasm from '@jitl/quickjs-wasmfile-release-sync/wasm'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { HOSTILE } from './hostile-cases.ts'
import { programCases, runProgramCases } from './program-cases.ts'

export default {
  async fetch(request) {
    const url = new URL(request.url)
    const hostile = url.searchParams.get('hostile')
    if (hostile !== null) {
      const session = await Agent.create().session(memoryWorkspace(), { quickjs: wasm })
      const started = Date.now()
      const result = await session.program({ source: HOSTILE[Number(hostile)], limits: { timeoutMs: 1000 } })
      const ms = Date.now() - started
      await session.close()
      return Response.json({ ms, exitCode: result.exitCode, errorKind: result.errorKind, error: result.metadata?.error })
    }
    const name = url.searchParams.get('case')
    const env = url.searchParams.get('loader') === 'default' ? {} : { quickjs: wasm }
    const results = await runProgramCases(env, (c) => c.name === name)
    return Response.json({ results, isModule: wasm instanceof WebAssembly.Module })
  },
}
`

/** The variant's wasm import becomes the Worker's own CompiledWasm module. */
const wasmModule: Plugin = {
  name: 'quickjs-wasm-module',
  setup(b) {
    b.onResolve({ filter: /(\.wasm|\/wasm)$/ }, () => ({ path: './quickjs.wasm', external: true }))
  },
}

describe('program (workerd)', () => {
  let mf: Miniflare | undefined
  let script = ''

  beforeAll(async () => {
    script = await bundle(
      { contents: WORKER, resolveDir: import.meta.dirname, target: 'workerd' },
      { plugins: [wasmModule] },
    )
    const wasmPath = createRequire(import.meta.url).resolve(
      '@jitl/quickjs-wasmfile-release-sync/wasm',
    )
    mf = new Miniflare({
      modules: [
        { type: 'ESModule', path: 'worker.js', contents: script },
        { type: 'CompiledWasm', path: 'quickjs.wasm', contents: await readFile(wasmPath) },
      ],
      compatibilityDate: '2026-04-01',
      host: '127.0.0.1',
      port: 0,
      cf: false,
      telemetry: { enabled: false },
    })
    await mf.ready
  }, 120_000)

  afterAll(async () => {
    await mf?.dispose()
  })

  it('bundles with no Node built-in; the wasm stays an import', () => {
    expect(nodeSpecifiers(script)).toEqual([])
    expect(script).toMatch(/from\s*["']\.\/quickjs\.wasm["']/)
  })

  const run = async (name: string, loader = 'module'): Promise<ProgramCaseResult> => {
    const response = await mf!.dispatchFetch(
      `http://127.0.0.1/run?case=${encodeURIComponent(name)}&loader=${loader}`,
    )
    const body = await response.text()
    expect(response.status, body).toBe(200)
    const { results, isModule } = JSON.parse(body) as {
      results: ProgramCaseResult[]
      isModule: boolean
    }
    expect(isModule).toBe(true)
    expect(results).toHaveLength(1)
    return results[0]!
  }

  for (const c of programCases) {
    it(
      c.name,
      async () => {
        const result = await run(c.name)
        expect(result.error ?? '').toBe('')
        expect(result.ok).toBe(true)
      },
      300_000,
    )
  }

  // workerd can stop no thread: the native-loop bound turns each hostile call into a typed error.
  for (const [index, source] of HOSTILE.entries()) {
    it(`${source}: a typed RangeError at once, not a frozen isolate`, async () => {
      const response = await mf!.dispatchFetch(`http://127.0.0.1/run?hostile=${index}`)
      const body = await response.text()
      expect(response.status, body).toBe(200)
      const reply = JSON.parse(body) as {
        ms: number
        exitCode: number
        errorKind?: { type: string }
        error?: { name: string; message: string }
      }
      expect(reply.exitCode).toBe(1)
      expect(reply.errorKind?.type).toBe('invalid_argument')
      expect(reply.error?.name).toBe('RangeError')
      expect(reply.error?.message).toMatch(/over this runtime's bound/)
      expect(reply.ms).toBeLessThan(2_000)
    }, 60_000)
  }

  it('without a module, the default loader fails with a typed result (no WebAssembly from bytes)', async () => {
    const result = await run(programCases[0]!.name, 'default')
    expect(result.ok).toBe(false)
    expect(result.error).toMatch(/unsupported|QuickJS could not be loaded/)
  }, 60_000)
})
