import { spawn, spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../../bin/isoagent.mjs', import.meta.url))
let dir: string

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' })
  return { code: run.status, stdout: run.stdout, stderr: run.stderr }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isoagent-cli-'))
  writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('isoagent CLI (built bin)', () => {
  it('lists the tool surface of a local workspace', () => {
    const { code, stdout } = cli('tools', '--workspace', dir)
    expect(code).toBe(0)
    const lines = stdout.split('\n')
    expect(lines.filter((l) => /^\w/.test(l)).map((l) => l.split(' ')[0])).toEqual([
      'read',
      'write',
      'edit',
      'patch',
      'ls',
      'search',
      'bash',
      'git',
      'download',
      'web_fetch',
      'web_search',
      'batch',
      'program',
      'Call',
    ])
    // Each tool: its first sentence, then its arguments (required ones starred) with their
    // types, enum values, ranges and descriptions (which give the defaults).
    expect(lines).toContain('search — Search the workspace.')
    const arg = (name: string) => lines.find((l) => l.trimStart().startsWith(name + ' '))?.trim()
    expect(arg('mode*')).toBe('mode*           grep|glob|bm25')
    expect(arg('output_mode')).toMatch(
      /^output_mode +content\|files_with_matches\|count\|summary +grep output \(default content\)\.$/,
    )
    expect(arg('context')).toMatch(/^context +integer 0\.\.8 +Lines of context .*\(default 0\)/)
    expect(arg('files')).toMatch(/^files +\{path\*, offset, limit\}\[\] 1\.\.32 items +Several/)
    expect(arg('command*')).toMatch(/^command\* +non-empty string ≤30000 chars +The bash script/)
    expect(stdout).toContain('isoagent tools --json')
    const json = cli('tools', '--workspace', dir, '--json')
    const defs = JSON.parse(json.stdout) as {
      name: string
      parameters: { additionalProperties: boolean }
    }[]
    expect(defs.every((d) => d.parameters.additionalProperties === false)).toBe(true)
  })

  it('prints a call result and mirrors its exit code', () => {
    const ok = cli('call', 'read', '{"file_path":"a.txt"}', '-w', dir)
    expect(ok).toMatchObject({ code: 0, stdout: '     1\talpha\n     2\tbeta\n' })
    const json = cli('call', 'read', '{"file_path":"a.txt","limit":1}', '-w', dir, '--json')
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({
      name: 'read',
      exitCode: 0,
      metadata: { range: { next_offset: 1 } },
    })
  })

  it('changes files through call, and refuses escapes with exit code 1', () => {
    expect(
      cli(
        'call',
        'edit',
        '{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}',
        '-w',
        dir,
      ).code,
    ).toBe(0)
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('alpha\ngamma\n')
    const escape = cli('call', 'read', '{"file_path":"../../etc/passwd"}', '-w', dir)
    expect(escape.code).toBe(1)
    expect(escape.stdout).toContain('escapes the workspace root')
    expect(escape.stderr).toBe('error: permission_denied\n')
    expect(cli('call', 'bash', '{"command":"exit 7"}', '-w', dir).code).toBe(1)
  })

  it('exits 2 on usage errors', () => {
    expect(cli('call', 'read', '{not json', '-w', dir).code).toBe(2)
    expect(cli('frobnicate', '-w', dir).code).toBe(2)
    const unknown = cli('call', 'frob', '{}', '-w', dir)
    expect(unknown).toMatchObject({ code: 2, stdout: '' })
    expect(unknown.stderr).toBe(
      'isoagent: unknown tool "frob"; this workspace offers: read, write, edit, patch, ls, search, bash, git, download, web_fetch, web_search, batch, program\n',
    )
    expect(cli('tools', '-w', join(dir, 'missing')).code).toBe(2)
    expect(cli().code).toBe(2)
    expect(cli('--help').code).toBe(0)
  })
})

describe('isoagent CLI bundle', () => {
  it('runs from bin/ and dist/cli/ alone, no node_modules, its searches on the bundled worker', () => {
    const pkg = mkdtempSync(join(tmpdir(), 'isoagent-pkg-'))
    try {
      cpSync(
        fileURLToPath(new URL('../../bin/isoagent.mjs', import.meta.url)),
        join(pkg, 'bin/isoagent.mjs'),
      )
      cpSync(fileURLToPath(new URL('../../dist/cli', import.meta.url)), join(pkg, 'dist/cli'), {
        recursive: true,
      })
      const run = (...args: string[]) =>
        spawnSync(process.execPath, [join(pkg, 'bin/isoagent.mjs'), ...args, '-w', dir], {
          encoding: 'utf8',
        })
      expect(run('call', 'read', '{"file_path":"a.txt","limit":1}')).toMatchObject({
        status: 0,
        stdout: expect.stringMatching(/^ {5}1\talpha\n/),
      })
      // The worker that the bundled scan pool starts from beside itself: a request it cannot
      // serve would show as a failure here, not fall back to this thread.
      const worker = new URL(`file://${join(pkg, 'dist/cli/scan-worker.js')}`)
      const probe = spawnSync(
        process.execPath,
        [
          '-e',
          `const { Worker } = require('node:worker_threads')
           const ready = new Int32Array(new SharedArrayBuffer(4))
           const w = new Worker(new URL(${JSON.stringify(worker.href)}), { workerData: { ready } })
           w.on('error', (e) => { console.log('error ' + e.message); process.exit(1) })
           const t = setInterval(() => { if (Atomics.load(ready, 0) === 1) { console.log('ready'); process.exit(0) } }, 10)`,
        ],
        { encoding: 'utf8', timeout: 20_000 },
      )
      expect(probe.stdout).toBe('ready\n')
      const grep = run('call', 'search', '{"mode":"grep","query":"alpha","output_mode":"count"}')
      expect(grep).toMatchObject({ status: 0, stdout: 'a.txt:1\n' })
      // Chunks loaded on first use, from beside the bundle: RE2 for a risky pattern (in the
      // scan worker too), isomorphic-git where no git executable is on PATH.
      const risky = run(
        'call',
        'search',
        '{"mode":"grep","query":"(al|x+)+pha","output_mode":"count"}',
      )
      expect(risky).toMatchObject({ status: 0, stdout: 'a.txt:1\n' })
      const repo = mkdtempSync(join(tmpdir(), 'isoagent-pkg-repo-'))
      try {
        const git = (command: string) =>
          spawnSync(
            process.execPath,
            [join(pkg, 'bin/isoagent.mjs'), 'call', 'git', JSON.stringify({ command }), '-w', repo],
            { encoding: 'utf8', env: { ...process.env, PATH: '' } },
          )
        expect(git('init')).toMatchObject({ status: 0 })
        expect(git('status')).toMatchObject({ status: 0, stdout: '## No commits yet on main\n' })
      } finally {
        rmSync(repo, { recursive: true, force: true })
      }
    } finally {
      rmSync(pkg, { recursive: true, force: true })
    }
  }, 60_000)

  it('starts without isomorphic-git, RE2 or the AWS SDK: chunks of their own, loaded when used', () => {
    const cliDir = fileURLToPath(new URL('../../dist/cli/', import.meta.url))
    const code = (file: string) => readFileSync(join(cliDir, file), 'utf8')
    // The chunks `isoagent.js` loads before it runs: its static imports, transitively.
    const startup = new Set<string>()
    const queue = ['isoagent.js']
    for (let file; (file = queue.pop()) !== undefined;) {
      if (startup.has(file)) continue
      startup.add(file)
      for (const m of code(file).matchAll(
        /\bimport\s*(?:[\w$\s{},*]+from\s*)?"\.\/([\w.-]+\.js)"/g,
      ))
        queue.push(m[1]!)
    }
    const atStart = [...startup].map(code).join('\n')
    const all = readdirSync(cliDir).map(code).join('\n')
    // isomorphic-git, re2js and @aws-sdk/client-s3, by strings of theirs.
    for (const marker of ['git-upload-pack', 'invalid nested repetition operator', 'S3Client']) {
      expect(all).toContain(marker)
      expect(atStart).not.toContain(marker)
    }
  })
})

describe('isoagent call read, started', () => {
  it('loads no node:crypto, child_process or web streams: the modules it does not use', () => {
    const entry = new URL('../../dist/cli/isoagent.js', import.meta.url).href
    const script = `const { main } = await import(${JSON.stringify(entry)})
      const write = process.stdout.write.bind(process.stdout)
      process.stdout.write = () => true
      const code = await main(['call', 'read', '{"file_path":"a.txt","limit":1}', '-w', ${JSON.stringify(dir)}])
      process.stdout.write = write
      console.log(JSON.stringify({ code, loaded: process.moduleLoadList }))`
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    })
    const { code, loaded } = JSON.parse(child.stdout) as { code: number; loaded: string[] }
    expect(code).toBe(0)
    for (const module of [
      'NativeModule crypto',
      'NativeModule child_process',
      'NativeModule internal/webstreams/readablestream',
    ])
      expect(loaded).not.toContain(module)
  })
})

describe('isoagent verify (built bin)', () => {
  const spec = (commands: unknown[]) => {
    const file = join(dir, `verify-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(file, JSON.stringify({ subject: 'release', commands }))
    return file
  }

  it('exits 0 when every required check passes, 1 when one fails', () => {
    const ok = cli(
      'verify',
      spec([
        { id: 'files', kind: 'test', command: 'test -f a.txt' },
        { id: 'opt', kind: 'lint', command: 'exit 4', required: false },
      ]),
      '-w',
      dir,
    )
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('release: PASSED')
    expect(ok.stdout).toContain('pass files (test) exit 0')
    expect(ok.stdout).toContain('FAIL opt (lint, optional) exit 4')
    const failed = cli(
      'verify',
      spec([{ id: 'unit', kind: 'test', command: 'echo "1 failing"; exit 1' }]),
      '-w',
      dir,
      '--json',
    )
    expect(failed.code).toBe(1)
    expect(JSON.parse(failed.stdout)).toMatchObject({
      subject: 'release',
      passed: false,
      results: [{ id: 'unit', kind: 'test', required: true, exitCode: 1, timedOut: false }],
    })
  })

  it('exits 2 on usage errors', () => {
    expect(cli('verify', '-w', dir).code).toBe(2)
    expect(cli('verify', join(dir, 'missing.json'), '-w', dir).code).toBe(2)
    const notJson = join(dir, 'not.json')
    writeFileSync(notJson, '{nope')
    expect(cli('verify', notJson, '-w', dir).code).toBe(2)
    const badShape = cli('verify', spec([{ id: 'x', kind: 'k' }]), '-w', dir)
    expect(badShape.code).toBe(2)
    expect(badShape.stderr).toContain('commands[0].command must be a non-empty string')
  })
})

describe('isoagent CLI signals', () => {
  it('kills the running command and its background jobs on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'call', 'bash', '{"command":"sleep 60 & echo $! > cli-pid.txt; wait"}', '-w', dir],
      { stdio: 'ignore' },
    )
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    )
    const pidFile = join(dir, 'cli-pid.txt')
    const until = Date.now() + 15_000
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
      if (Date.now() > until) throw new Error('the command never started')
      await new Promise((r) => setTimeout(r, 20))
    }
    const pid = Number(readFileSync(pidFile, 'utf8'))
    child.kill('SIGTERM')
    expect(await exited).toBe(143)
    let gone: boolean
    try {
      process.kill(pid, 0)
      gone = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z')
    } catch {
      gone = true
    }
    expect(gone).toBe(true)
  })
})
