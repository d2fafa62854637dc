// The program suite in Debian Chromium (playwright-core): the cases bundled for the browser with
// Node built-ins forbidden, served from 127.0.0.1 with QuickJS's .wasm beside the bundle as
// application/wasm, where the variant's browser loader fetches it (as a Vite build emits it).
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM, launchChromium, MISSING_CHROMIUM } from '../runtime/chromium-launch.ts'
import { bundle, nodeSpecifiers } from '../runtime/bundle.ts'
import { programCases, type ProgramCaseResult } from './program-cases.ts'

const ENTRY = `
import { quickJsFromModule } from '../../adapters/index.ts'
import { runProgramCases } from './program-cases.ts'

let compiled
globalThis.runProgramCase = async (name, loader) => {
  let env = {}
  if (loader === 'compiled') {
    compiled ??= WebAssembly.compileStreaming(fetch('/emscripten-module.wasm'))
    env = { quickjs: quickJsFromModule(await compiled) }
  }
  return runProgramCases(env, (c) => c.name === name)
}
`

const PAGE = `<!doctype html>
<html>
  <head><meta charset="utf-8"><link rel="icon" href="data:,"><title>isoagent program</title></head>
  <body><script type="module" src="/program.js"></script></body>
</html>
`

it(`has Debian Chromium at ${CHROMIUM}`, () => {
  expect(existsSync(CHROMIUM), MISSING_CHROMIUM).toBe(true)
})

describe('program (Chromium)', () => {
  let server: Server | undefined
  let browser: Browser | undefined
  let page: Page
  let code = ''
  const pageErrors: string[] = []
  const wasmRequests: string[] = []

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(MISSING_CHROMIUM)
    code = await bundle({ contents: ENTRY, resolveDir: import.meta.dirname, target: 'browser' })
    const wasm = await readFile(
      createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm'),
    )
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
      if (path === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
      else if (path === '/program.js')
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(code)
      else if (path === '/emscripten-module.wasm') {
        wasmRequests.push(path)
        res.writeHead(200, { 'content-type': 'application/wasm' }).end(wasm)
      } else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    })
    await new Promise<void>((done, fail) => {
      server!.once('error', fail)
      server!.listen(0, '127.0.0.1', done)
    })
    const { port } = server.address() as AddressInfo
    browser = await launchChromium()
    page = await browser.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text())
    })
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.waitForFunction(() => 'runProgramCase' in globalThis, undefined, { timeout: 20_000 })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()))
  })

  it('bundles with no Node built-in', () => {
    expect(nodeSpecifiers(code)).toEqual([])
  })

  const run = async (name: string, loader = 'default'): Promise<ProgramCaseResult> => {
    const results = await page.evaluate(
      ([n, l]) =>
        (
          globalThis as unknown as {
            runProgramCase(n: string, l: string): Promise<ProgramCaseResult[]>
          }
        ).runProgramCase(n, l),
      [name, loader] as const,
    )
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

  it('a module the page compiled itself (quickJsFromModule) serves the same', async () => {
    const result = await run(programCases[0]!.name, 'compiled')
    expect(result.error ?? '').toBe('')
    expect(wasmRequests.length).toBeGreaterThanOrEqual(2)
    expect(pageErrors).toEqual([])
  }, 60_000)
})
