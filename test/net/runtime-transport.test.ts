// On Node, every package entry resolves names and checks every answer, whichever entry a process
// imports (DESIGN, "Runtime wiring"). Each case is a child Node process that imports one built
// entry by the package's name (a temp dir whose node_modules/isoagent links to this checkout), so
// Node's own export-condition resolution is what is tested. A preloaded module plays the DNS: one
// name, which no literal rule catches, answers 127.0.0.1 to every lookup in the child (the one the
// runtime's fetch does and the one the isoagent transport does).
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from './http-fixture.ts'

const REBOUND_NAME = 'private-site.test'
const root = fileURLToPath(new URL('../..', import.meta.url))

const FAKE_DNS = `
import dns from 'node:dns'
const NAME = ${JSON.stringify(REBOUND_NAME)}
const lookup = dns.lookup
dns.lookup = function (hostname, options, callback) {
  if (hostname !== NAME) return lookup.apply(this, arguments)
  const done = typeof options === 'function' ? options : callback
  const all = typeof options === 'object' && options !== null && options.all === true
  queueMicrotask(() => all ? done(null, [{ address: '127.0.0.1', family: 4 }]) : done(null, '127.0.0.1', 4))
}
const promised = dns.promises.lookup
dns.promises.lookup = async function (hostname, options) {
  if (hostname !== NAME) return promised.apply(this, arguments)
  const answer = { address: '127.0.0.1', family: 4 }
  return options && options.all ? [answer] : answer
}
`

/**
 * A child script: imports `entry` only, runs `tool` against `url` (web_fetch fetches it,
 * web_search asks a SearXNG engine at it), prints the result as JSON.
 */
function script(entry: string, tool: string, url: string): string {
  if (tool === 'download')
    // download needs a local disk: the workspace from isoagent/node, the Agent from `entry`.
    return `
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent } from ${JSON.stringify(entry)}
import { localWorkspace } from 'isoagent/node'
const root = mkdtempSync(join(tmpdir(), 'isoagent-dl-'))
const session = await Agent.create().session(localWorkspace(root))
const result = await session.tool('download', ${JSON.stringify({ url, file_path: 'got.bin' })})
const { existsSync } = await import('node:fs')
result.output += existsSync(join(root, 'got.bin')) ? ' [file written]' : ''
process.stdout.write(JSON.stringify(result))
`
  const args = tool === 'web_search' ? { query: 'anything' } : { url }
  const options =
    tool === 'web_search'
      ? `{ webSearch: { engines: [searxngEngine(${JSON.stringify(url)})] } }`
      : '{}'
  return `
import { Agent, memoryWorkspace, searxngEngine } from ${JSON.stringify(entry)}
const session = await Agent.create().session(memoryWorkspace(), ${options})
const result = await session.tool(${JSON.stringify(tool)}, ${JSON.stringify(args)})
process.stdout.write(JSON.stringify(result))
`
}

interface ToolResult {
  exitCode: number
  output: string
  errorKind?: { type: string }
}

let dir: string
let site: TestServer

function runChild(entry: string, tool: string, url: string): Promise<ToolResult> {
  const file = join(dir, `case-${Math.random().toString(36).slice(2)}.mjs`)
  writeFileSync(file, script(entry, tool, url))
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', join(dir, 'fake-dns.mjs'), file],
      { cwd: dir, timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`))
        else resolve(JSON.parse(stdout) as ToolResult)
      },
    )
  })
}

beforeAll(async () => {
  site = await startServer()
  site.route('/secret', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end('internal only')
  })
  site.route('/search', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(
      JSON.stringify({
        results: [{ url: 'https://internal.example/', title: 'internal only', content: 'x' }],
      }),
    )
  })
  dir = mkdtempSync(join(tmpdir(), 'isoagent-runtime-'))
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(root, join(dir, 'node_modules', 'isoagent'), 'dir')
  writeFileSync(join(dir, 'fake-dns.mjs'), FAKE_DNS)
})

afterAll(async () => {
  await site.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('Node entries resolve names and check every answer', () => {
  it('the fake DNS really answers 127.0.0.1 to the runtime fetch (the test can fail)', async () => {
    const file = join(dir, 'plain-fetch.mjs')
    writeFileSync(
      file,
      `const r = await fetch('http://${REBOUND_NAME}:${site.port}/secret'); process.stdout.write(JSON.stringify({ exitCode: 0, output: await r.text() }))`,
    )
    const result = await new Promise<ToolResult>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', join(dir, 'fake-dns.mjs'), file],
        { cwd: dir },
        (e, out, err) => (e ? reject(new Error(err)) : resolve(JSON.parse(out) as ToolResult)),
      ),
    )
    expect(result.output).toBe('internal only')
  })

  const cases: [string, string][] = [
    ['isoagent', 'web_fetch'],
    ['isoagent', 'web_search'],
    ['isoagent/s3', 'web_fetch'],
    ['isoagent/edge', 'web_fetch'],
    ['isoagent/browser', 'web_fetch'],
    ['isoagent', 'download'],
    ['isoagent/s3', 'download'],
  ]
  for (const [entry, tool] of cases) {
    const how =
      tool === 'download'
        ? `with the Agent from ${entry} (the disk from isoagent/node)`
        : `after importing only ${entry}`
    it(`${tool} ${how}: a name answering 127.0.0.1 is refused`, async () => {
      const path = tool === 'web_search' ? '/search' : '/secret'
      const before = site.hits(path)
      const url = `http://${REBOUND_NAME}:${site.port}${tool === 'web_search' ? '' : path}`
      const result = await runChild(entry, tool, url)
      expect(result.exitCode).toBe(1)
      expect(result.output).not.toContain('internal only')
      expect(result.output).toContain('resolves to loopback')
      if (tool !== 'web_search') expect(result.errorKind?.type).toBe('permission_denied')
      expect(result.output).not.toContain('[file written]')
      expect(site.hits(path)).toBe(before)
    })
  }

  it('the trailing-dot forms of loopback are refused before any request', async () => {
    for (const host of ['127.0.0.1..', 'localhost..']) {
      const before = site.hits('/secret')
      const result = await runChild('isoagent', 'web_fetch', `http://${host}:${site.port}/secret`)
      expect(result.exitCode).toBe(1)
      expect(result.errorKind?.type).toBe('permission_denied')
      expect(site.hits('/secret')).toBe(before)
    }
  })
})
