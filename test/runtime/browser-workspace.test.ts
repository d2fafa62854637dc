// browserWorkspace on Chromium's real IndexedDB: the adapter, the core and the shared conformance
// suites are bundled for the browser (Node built-ins forbidden), served from 127.0.0.1 and run in
// Debian Chromium driven by playwright-core. What is deterministic is compared with Node: the tool
// scenario with memoryWorkspace's record, the port operations with node:fs (the oracle).
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Plugin } from 'esbuild'
import { CHROMIUM, launchChromium, MISSING_CHROMIUM } from './chromium-launch.ts'
import { type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { operations, outcomeOf, type Outcome } from '../conformance/port-cases.ts'
import { ROOT, bundle, nodeSpecifiers } from './bundle.ts'
import { runWorkspaceScenario, type ScenarioRecord } from './browser-scenario.ts'
import type { CaseResult } from './page-shims/vitest.ts'

const QUOTA_BYTES = 2 * 1024 * 1024
const MISSING = MISSING_CHROMIUM

const PAGE = `<!doctype html>
<html>
  <head><meta charset="utf-8"><link rel="icon" href="data:,"><title>isoagent browser workspace</title></head>
  <body><script type="module" src="/page.js"></script></body>
</html>
`

// The shared suites import vitest and a few node:* modules; in the page those resolve to shims.
// Only these two importers get them: a node:* import anywhere else still fails the build.
const SHIMS: Record<string, string> = {
  vitest: 'test/runtime/page-shims/vitest.ts',
  'node:crypto': 'test/runtime/page-shims/node-crypto.ts',
  'node:fs': 'test/runtime/page-shims/node-stub.ts',
  'node:os': 'test/runtime/page-shims/node-stub.ts',
  'node:path': 'test/runtime/page-shims/node-stub.ts',
}
const SHIMMED_IMPORTERS = ['test/conformance/tool-cases.ts', 'test/conformance/port-cases.ts'].map(
  (path) => resolve(ROOT, path),
)
const pageShims: Plugin = {
  name: 'page-shims',
  setup(b) {
    b.onResolve({ filter: /^(vitest|node:(crypto|fs|os|path))$/ }, (args) =>
      SHIMMED_IMPORTERS.includes(args.importer)
        ? { path: resolve(ROOT, SHIMS[args.path]!) }
        : undefined,
    )
  },
}

interface PageApi {
  scenario(name: string): Promise<ScenarioRecord>
  reopen(name: string): Promise<{
    tree: Record<string, string>
    toolNames: string[]
    read: { exitCode: number; output: string }
    heldBefore: string[]
    heldOpen: string[]
  }>
  concurrentEdits(name: string): Promise<{
    edits: { exitCode: number; output: string; errorKind: Record<string, unknown> | null }[]
    text: string
    writes: string[]
  }>
  conformance(): Promise<CaseResult[]>
  portOutcomes(): Promise<{ label: string; outcome: Outcome }[]>
  quota(
    name: string,
    bytes: number,
  ): Promise<{
    before: Record<string, string>
    after: Record<string, string>
    rootNames: string[]
    created: { exitCode: number; output: string; errorKind: Record<string, unknown> | null }
    replaced: { exitCode: number; output: string; errorKind: Record<string, unknown> | null }
    port: string
    small: { exitCode: number }
  }>
  treeOf(name: string): Promise<Record<string, string>>
}

/** Calls `isoagentBrowser[fn](...args)` in the page and returns its (JSON) result. */
async function inPage<K extends keyof PageApi>(
  page: Page,
  fn: K,
  ...args: Parameters<PageApi[K]>
): Promise<Awaited<ReturnType<PageApi[K]>>> {
  const json = await page.evaluate(
    async ([name, rest]) => {
      const api = (
        globalThis as unknown as {
          isoagentBrowser: Record<string, (...args: unknown[]) => Promise<unknown>>
        }
      ).isoagentBrowser
      return JSON.stringify(await api[name as string]!(...(rest as unknown[])))
    },
    [fn, args] as const,
  )
  return JSON.parse(json)
}

// A missing browser is a failure, never a skip: this test fails by name, and the suite's
// beforeAll throws so none of its tests can pass either.
it(`has Debian Chromium at ${CHROMIUM}`, () => {
  expect(existsSync(CHROMIUM), MISSING).toBe(true)
})

describe('browserWorkspace in Chromium (lightning-fs on IndexedDB)', () => {
  const servers: Server[] = []
  let browser: Browser | undefined
  let code: string
  let userAgent: string
  let secure: boolean
  const pageErrors: string[] = []
  let record: ScenarioRecord
  let inNode: ScenarioRecord
  let reopened: Awaited<ReturnType<PageApi['reopen']>>
  let afterReload: Record<string, string>
  let race: Awaited<ReturnType<PageApi['concurrentEdits']>>
  let cases: CaseResult[]
  let portInPage: { label: string; outcome: Outcome }[]
  let portOnDisk: { label: string; outcome: Outcome }[]
  let quota: Awaited<ReturnType<PageApi['quota']>>

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(MISSING)
    code = await bundle(
      { entry: 'test/runtime/browser-page.ts', target: 'browser' },
      { plugins: [pageShims] },
    )
    const serve = (req: IncomingMessage, res: ServerResponse) => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
      if (path === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
      else if (path === '/page.js')
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(code)
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    }
    // Two origins: the second one's storage gets a small quota before it is ever used (Chromium
    // reads an origin's quota when its IndexedDB is first opened).
    const [origin, quotaOrigin] = await Promise.all(
      [0, 1].map(async () => {
        const server = createServer(serve)
        servers.push(server)
        await new Promise<void>((done, fail) => {
          server.once('error', fail)
          server.listen(0, '127.0.0.1', done)
        })
        return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      }),
    )

    browser = await launchChromium()
    const context = await browser.newContext()
    const openPage = async (at: string) => {
      const page = await context.newPage()
      page.on('pageerror', (error) => pageErrors.push(error.message))
      page.on('console', (message) => {
        if (message.type() === 'error') pageErrors.push(message.text())
      })
      await load(page, at)
      return page
    }
    const load = async (page: Page, at: string) => {
      await page.goto(`${at}/`)
      await page.waitForFunction(() => 'isoagentBrowser' in globalThis, undefined, {
        timeout: 10_000,
      })
    }

    const page = await openPage(origin!)
    ;({ userAgent, secure } = await page.evaluate(() => ({
      userAgent: navigator.userAgent,
      secure: globalThis.isSecureContext,
    })))
    record = await inPage(page, 'scenario', 'scenario-fs')
    reopened = await inPage(page, 'reopen', 'scenario-fs')
    await load(page, origin!) // a reload: only IndexedDB carries the files over
    afterReload = await inPage(page, 'treeOf', 'scenario-fs')
    race = await inPage(page, 'concurrentEdits', 'race-fs')
    cases = await inPage(page, 'conformance')
    portInPage = await inPage(page, 'portOutcomes')

    // QUOTA_BYTES for the second origin (Chromium's DevTools protocol), then writes past it.
    const cdp = await context.newCDPSession(page)
    await cdp.send('Storage.overrideQuotaForOrigin', {
      origin: quotaOrigin!,
      quotaSize: QUOTA_BYTES,
    })
    quota = await inPage(await openPage(quotaOrigin!), 'quota', 'quota-fs', 4 * QUOTA_BYTES)

    inNode = JSON.parse(JSON.stringify(await runWorkspaceScenario(memoryWorkspace())))
    const oracle = mkdtempSync(join(tmpdir(), 'isoagent-oracle-'))
    try {
      portOnDisk = []
      for (const op of operations)
        portOnDisk.push({ label: op.label, outcome: await outcomeOf(() => op.disk(oracle)) })
      portOnDisk = JSON.parse(JSON.stringify(portOnDisk))
    } finally {
      rmSync(oracle, { recursive: true, force: true })
    }
  })

  afterAll(async () => {
    await browser?.close()
    for (const server of servers) {
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
    }
  })

  it('ran inside Chromium, in a secure context, without page errors', () => {
    expect(userAgent).toMatch(/Chrome\/\d+/)
    expect(secure).toBe(true)
    expect(pageErrors).toEqual([])
  })

  it('the browser bundle has no node: specifier', () => {
    expect(nodeSpecifiers(code)).toEqual([])
  })

  it('offers the file tools, search and git (isomorphic-git on lightning-fs), never bash or download', () => {
    for (const names of [record.toolNames, reopened.toolNames]) {
      expect(names).toEqual(expect.arrayContaining(['read', 'write', 'edit', 'patch', 'ls']))
      expect(names).toContain('search')
      expect(names).not.toContain('bash')
      expect(names).not.toContain('download')
      expect(names).toContain('git')
    }
  })

  it('runs read/write/edit/patch/ls/search and bad input exactly as memoryWorkspace does in Node', () => {
    expect(record.steps.map((s) => s.step)).toEqual(inNode.steps.map((s) => s.step))
    for (const [i, step] of record.steps.entries()) expect(step).toEqual(inNode.steps[i])
    expect(record).toEqual(inNode)
    const step = (name: string) => record.steps.find((s) => s.step === name)!
    expect(step('edit (CRLF)').exitCode).toBe(0)
    expect(step('glob **/*.ts').output).toBe('src/app.ts\nsrc/new.ts\nsrc/util/strings.ts')
    expect(step('grep case-insensitive').output).toBe(
      'docs/guide.md:7:Files live in IndexedDB through lightning-fs.',
    )
    expect(step('bad: ../ escape').errorKind?.type).toBe('permission_denied')
    expect(record.trees.final).toEqual(record.trees['before bad input'])
    // git: isomorphic-git over lightning-fs on real IndexedDB.
    for (const s of record.steps.filter((s) => s.tool === 'git')) expect(s.exitCode, s.step).toBe(0)
    expect(step('git commit').output).toBe('[main (root-commit) <abbrev>] Scenario commit')
    expect(step('git stash list').output).toBe('stash@{0}: WIP on main: <abbrev> Scenario commit')
    expect(step('git status').output).toBe('## main\n M src/app.ts')
    expect(step('git log').output).toContain('    Scenario commit')
  })

  it('keeps the files in IndexedDB: a second workspace object and a reload see them', () => {
    expect(reopened.tree).toEqual(record.trees.final)
    expect(reopened.read.exitCode).toBe(0)
    expect(reopened.read.output).toBe('     1\tone\n     2\ttwo ✓')
    // Closing released lightning-fs's lock at once; an open workspace holds it.
    expect(reopened.heldBefore).not.toContain('scenario-fs_lock')
    expect(reopened.heldOpen).toContain('scenario-fs_lock')
    expect(afterReload).toEqual(record.trees.final)
  })

  it('two concurrent edits: one succeeds, the other gets version_conflict', () => {
    expect(race.edits.map((e) => e.exitCode).sort()).toEqual([0, 1])
    expect(race.edits.find((e) => e.exitCode === 1)!.errorKind).toMatchObject({
      type: 'version_conflict',
      path: 'race.txt',
    })
    expect(['ALPHA\nbeta\n', 'alpha\nBETA\n']).toContain(race.text)
    expect(race.writes.filter((w) => w === 'ok')).toHaveLength(1)
    expect(race.writes.filter((w) => w === 'version_conflict')).toHaveLength(3)
  })

  it('passes the shared tool and port conformance cases in the page', () => {
    const failed = cases.filter((c) => !c.ok).map((c) => `${c.name}\n${c.error}`)
    expect(failed).toEqual([])
    expect(cases.filter((c) => c.name.startsWith('tool conformance')).length).toBeGreaterThan(30)
    expect(cases.filter((c) => c.name.startsWith('port conformance'))).toHaveLength(4)
  })

  it('does each port operation on Chromium IndexedDB as node:fs does on disk', () => {
    expect(portInPage.map((o) => o.label)).toEqual(portOnDisk.map((o) => o.label))
    for (const [i, op] of portInPage.entries()) expect(op, op.label).toEqual(portOnDisk[i])
  })

  it('turns a full quota into io "storage quota exceeded" and leaves the files as they were', () => {
    for (const r of [quota.created, quota.replaced]) {
      expect(r.exitCode, r.output).toBe(1)
      expect(r.errorKind).toMatchObject({ type: 'transport' })
      expect(r.output).toContain('storage quota exceeded')
    }
    expect(quota.port).toMatch(/^io: storage quota exceeded/)
    expect(quota.after).toEqual(quota.before)
    expect(quota.rootNames).toEqual(['keep.txt']) // no temp file, no directory made for dir/big.txt
    expect(quota.small.exitCode).toBe(0)
  })
})
