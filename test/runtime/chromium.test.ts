// The core + memory workspace, bundled for the browser with Node built-ins forbidden, run
// unchanged in Debian Chromium (driven by playwright-core): the scenario's record must equal the
// Node run's, byte for byte. The page is served from 127.0.0.1 so it is a secure context
// (crypto.subtle exists there, not on about:blank or file:).
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { CHROMIUM, launchChromium, MISSING_CHROMIUM } from './chromium-launch.ts'
import { type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, nodeSpecifiers } from './bundle.ts'
import { runSmokeScenario, type SmokeRecord } from './smoke-scenario.ts'
import { expectKeyFacts } from './smoke-facts.ts'

const PAGE = `<!doctype html>
<html>
  <head><meta charset="utf-8"><link rel="icon" href="data:,"><title>isoagent smoke</title></head>
  <body>
    <script type="module">
      import { runSmokeScenario } from '/smoke.js'
      globalThis.runSmokeScenario = runSmokeScenario
    </script>
  </body>
</html>
`

interface PageRun {
  userAgent: string
  secure: boolean
  record: SmokeRecord
}

const MISSING = MISSING_CHROMIUM

// A missing browser is a failure, never a skip: this test fails by name, and the suite's
// beforeAll throws so none of its tests can pass either.
it(`has Debian Chromium at ${CHROMIUM}`, () => {
  expect(existsSync(CHROMIUM), MISSING).toBe(true)
})

describe('Chromium (playwright-core)', () => {
  let server: Server | undefined
  let browser: Browser | undefined
  let code: string
  let inChromium: PageRun
  let inNode: SmokeRecord
  const pageErrors: string[] = []

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(MISSING)
    code = await bundle({ entry: 'test/runtime/smoke-scenario.ts', target: 'browser' })

    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
      if (path === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
      } else if (path === '/smoke.js') {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(code)
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      }
    })
    await new Promise<void>((done, fail) => {
      server!.once('error', fail)
      server!.listen(0, '127.0.0.1', done)
    })
    const { port } = server.address() as AddressInfo

    browser = await launchChromium()
    const page = await browser.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text())
    })
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.waitForFunction(() => 'runSmokeScenario' in globalThis, undefined, {
      timeout: 10_000,
    })
    const json = await page.evaluate(async () => {
      const run = (globalThis as unknown as { runSmokeScenario: () => Promise<unknown> })
        .runSmokeScenario
      const record = await run()
      return JSON.stringify({
        userAgent: navigator.userAgent,
        secure: globalThis.isSecureContext,
        record,
      })
    })
    inChromium = JSON.parse(json) as PageRun
    inNode = JSON.parse(JSON.stringify(await runSmokeScenario())) as SmokeRecord
  })

  afterAll(async () => {
    await browser?.close()
    if (server !== undefined) {
      server.closeAllConnections()
      await new Promise<void>((done) => server!.close(() => done()))
    }
  })

  it('ran inside Chromium, in a secure context, without page errors', () => {
    expect(inChromium.userAgent).toMatch(/Chrome\/\d+/)
    expect(inChromium.secure).toBe(true)
    expect(pageErrors).toEqual([])
  })

  it('the browser bundle has no node: specifier', () => {
    expect(nodeSpecifiers(code)).toEqual([])
  })

  it('produces exactly the record Node produces', () => {
    const record = inChromium.record
    expect(record.steps.map((s) => s.step)).toEqual(inNode.steps.map((s) => s.step))
    for (const [i, step] of record.steps.entries()) expect(step).toEqual(inNode.steps[i])
    expect(record).toEqual(inNode)
  })

  it('keeps the key facts in Chromium', () => {
    expectKeyFacts(inChromium.record)
  })
})
