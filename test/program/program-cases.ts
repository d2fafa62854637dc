// The program suite: the same cases run in Node (node.test.ts), in workerd (workerd.test.ts,
// bundled into a Worker) and in Chromium (chromium.test.ts, bundled into a page), over a memory
// workspace, through the public `isoagent` entry only. A case throws when a fact does not hold.
import {
  Agent,
  memoryWorkspace,
  type CustomTool,
  type QuickJsLoader,
  type Session,
  type SessionOptions,
  type ToolCall,
  type ToolResult,
} from '../../adapters/index.ts'

/** How a runtime hands QuickJS to the sessions of the suite (undefined: the default loader). */
export interface ProgramEnv {
  quickjs?: QuickJsLoader | WebAssembly.Module
  /**
   * Guests run on a thread whose native stack is smaller than QuickJS's stack limit needs (a
   * browser Web Worker), so a deep recursion ends at the host's stack, uncatchable by the guest.
   */
  smallHostStack?: boolean
}

/** One case of the suite. */
export interface ProgramCase {
  name: string
  /** Cases too slow or too heavy for every runtime run only where `heavy` runs are asked for. */
  heavy?: boolean
  run(env: ProgramEnv): Promise<void>
}

/** How a case ended. */
export interface ProgramCaseResult {
  name: string
  ok: boolean
  error?: string
  ms: number
}

const MiB = 1024 * 1024

export const FILES = {
  'src/a.ts': 'export const a = 1 // TODO: rename\n',
  'src/b.ts': 'export const b = 2\n',
  'src/c.ts': '// TODO: test c\n// TODO: and again\n',
  'docs/readme.md': '# readme\n',
  'secret/key.txt': 'hunter2\n',
  'scripts/summary.mjs':
    'export default async function run(ctx, inputs) {\n  const paths = await ctx.glob(inputs.pattern)\n  return { paths }\n}\n',
}

function fail(message: string): never {
  throw new Error(message)
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) fail(message)
}

function same(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual)
  const e = JSON.stringify(expected)
  if (a !== e) fail(`${what}: expected ${e}, got ${a}`)
}

function brief(r: ToolResult): string {
  return JSON.stringify({
    exitCode: r.exitCode,
    output: r.output.slice(0, 300),
    errorKind: r.errorKind,
    limit: r.metadata?.limit,
  })
}

function ok(r: ToolResult): ToolResult {
  check(r.exitCode === 0, `expected success, got ${brief(r)}`)
  return r
}

function failed(r: ToolResult, type: string, limit?: string): ToolResult {
  check(
    r.exitCode === 1 && r.errorKind?.type === type,
    `expected a ${type} failure, got ${brief(r)}`,
  )
  if (limit !== undefined) same(r.metadata?.limit, limit, 'metadata.limit')
  check(r.output.length > 0, 'a failure has readable output')
  return r
}

/** A tool that waits until its call is cancelled (and reports that it saw the signal). */
function waitingTool(seen: { aborted: number; started: number }): CustomTool {
  return {
    name: 'wait',
    description: 'Waits until cancelled.',
    parameters: { type: 'object', additionalProperties: false, properties: {} },
    scheduling: { read_only: true, idempotent: true, max_parallelism: 16 },
    run: (_args, runtime) =>
      new Promise((resolve) => {
        seen.started++
        runtime.signal.addEventListener('abort', () => {
          seen.aborted++
          resolve('stopped')
        })
      }),
  }
}

const noopTool: CustomTool = {
  name: 'noop',
  description: 'Returns its argument.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    properties: { n: { type: 'integer' } },
  },
  scheduling: { read_only: true, idempotent: true, max_parallelism: 16 },
  run: (args) => `n=${String(args.n)}`,
}

async function session(env: ProgramEnv, options: SessionOptions = {}): Promise<Session> {
  return Agent.create().session(memoryWorkspace({ ...FILES }), {
    ...(env.quickjs !== undefined ? { quickjs: env.quickjs } : {}),
    ...options,
  })
}

async function withSession(
  env: ProgramEnv,
  body: (s: Session) => Promise<void>,
  options: SessionOptions = {},
): Promise<void> {
  const s = await session(env, options)
  try {
    await body(s)
  } finally {
    await s.close()
  }
}

const within = (actual: number, target: number, what: string) =>
  check(
    actual >= target * 0.9 && actual <= target * 1.1 + 50,
    `${what}: ${actual} ms is not within 10% of ${target} ms`,
  )

export const programCases: ProgramCase[] = [
  {
    name: 'a script greps, reads the matches and returns a summary',
    run: (env) =>
      withSession(env, async (s) => {
        same(s.toolNames().includes('program'), true, 'program is registered')
        const r = ok(
          await s.program({
            source: `export default async function run(ctx, inputs) {
  const files = (await ctx.grep(inputs.word, { output_mode: 'files_with_matches' })).split('\\n').filter(Boolean)
  const summary = []
  for (const file of files) {
    const text = await ctx.readFile(file)
    summary.push({ file, lines: text.split('\\n').length, todos: (text.match(/TODO/g) || []).length })
  }
  ctx.log('scanned', files.length, 'files')
  return { word: inputs.word, summary }
}`,
            inputs: { word: 'TODO' },
          }),
        )
        const value = {
          word: 'TODO',
          summary: [
            { file: 'src/a.ts', lines: 1, todos: 1 },
            { file: 'src/c.ts', lines: 2, todos: 2 },
          ],
        }
        same(r.metadata?.value, value, 'metadata.value')
        same(JSON.parse(r.output), value, 'output is the value as readable JSON')
        same(r.metadata?.tool_calls, 3, 'tool_calls')
        same(r.metadata?.logs, ['scanned 2 files'], 'logs')
        check(typeof r.metadata?.duration_ms === 'number', 'duration_ms')
      }),
  },
  {
    name: 'Promise.all over tools, and a function body that returns a value',
    run: (env) =>
      withSession(env, async (s) => {
        const r = ok(
          await s.program({
            source: `const texts = await Promise.all(['src/a.ts', 'src/b.ts', 'src/c.ts', 'docs/readme.md'].map((p) => ctx.readFile(p)))
const [glob, ls] = await Promise.all([ctx.glob('src/*.ts'), ctx.ls('src')])
return { sizes: texts.map((t) => t.length), glob, ls: ls.exitCode }`,
          }),
        )
        same(
          r.metadata?.value,
          { sizes: [41, 25, 48, 15], glob: ['src/a.ts', 'src/b.ts', 'src/c.ts'], ls: 0 },
          'value',
        )
        same(r.metadata?.tool_calls, 6, 'tool_calls')
        const text = ok(await s.program({ source: 'return "plain " + inputs.n', inputs: { n: 7 } }))
        same(text.output, 'plain 7', 'a string value is the output as it is')
        same(text.metadata?.value, 'plain 7', 'value')
        const none = ok(await s.program({ source: 'ctx.log("nothing")' }))
        same([none.output, none.metadata?.value], ['', null], 'no return value')
      }),
  },
  {
    name: 'a program from a workspace file (path), and bad sources are typed failures',
    run: (env) =>
      withSession(env, async (s) => {
        const r = ok(
          await s.program({ path: 'scripts/summary.mjs', inputs: { pattern: 'docs/*' } }),
        )
        same(r.metadata?.value, { paths: ['docs/readme.md'] }, 'value')
        failed(await s.program({ path: 'scripts/missing.js' }), 'not_found')
        failed(await s.program({ path: 'src/a.ts' }), 'invalid_argument')
        failed(
          await s.program({ source: 'return 1', path: 'scripts/summary.mjs' }),
          'invalid_argument',
        )
        failed(await s.program({}), 'invalid_argument')
        failed(await s.program({ path: '../escape.js' }), 'permission_denied')
        failed(
          await s.tool('program', { source: 'return 1', limits: { timeoutMs: 0 } }),
          'invalid_argument',
        )
        failed(await s.tool('program', { source: 'return 1', extra: true }), 'invalid_argument')
      }),
  },
  {
    name: 'errors thrown by tools: helpers throw a ToolError, ctx.tool returns the failure',
    run: (env) =>
      withSession(env, async (s) => {
        const caught = ok(
          await s.program({
            source: `try { await ctx.readFile('nope.txt'); return 'read?' } catch (e) {
  const raw = await ctx.tool('read', { file_path: 'nope.txt' })
  return { name: e.name, kind: e.errorKind.type, exitCode: e.exitCode, raw: [raw.exitCode, raw.errorKind.type] }
}`,
          }),
        )
        same(
          caught.metadata?.value,
          { name: 'ToolError', kind: 'not_found', exitCode: 1, raw: [1, 'not_found'] },
          'caught',
        )
        const uncaught = failed(
          await s.program({ source: "await ctx.readFile('nope.txt')\nreturn 1" }),
          'invalid_argument',
        )
        check(
          /ToolError/.test(uncaught.output) && /nope\.txt/.test(uncaught.output),
          uncaught.output,
        )
        const unknown = ok(
          await s.program({ source: "return (await ctx.tool('no_such_tool', {})).errorKind.type" }),
        )
        same(unknown.metadata?.value, 'unsupported', 'unknown tool')
      }),
  },
  {
    name: 'errors thrown by the script, and syntax errors, name their line',
    run: (env) =>
      withSession(env, async (s) => {
        const thrown = failed(
          await s.program({
            source:
              'export default async function run(ctx) {\n  const x = 1\n  throw new RangeError("bad " + x)\n}\n',
          }),
          'invalid_argument',
        )
        same(
          [
            thrown.metadata?.error && (thrown.metadata.error as Record<string, unknown>).name,
            (thrown.metadata?.error as Record<string, unknown>).line,
          ],
          ['RangeError', 3],
          'error name and line',
        )
        check(/RangeError: bad 1 \(line 3/.test(thrown.output), thrown.output)
        const syntax = failed(
          await s.program({
            source: 'export default async function run(ctx) {\n  const a = 1\n  const b = ;\n}\n',
          }),
          'invalid_argument',
        )
        const error = syntax.metadata?.error as Record<string, unknown>
        same([error.name, error.line], ['SyntaxError', 3], 'module syntax error')
        check(/line 3/.test(syntax.output), syntax.output)
        const body = failed(
          await s.program({ source: 'const a = 1\n\nreturn a +* 2' }),
          'invalid_argument',
        )
        same((body.metadata?.error as Record<string, unknown>).line, 3, 'body syntax error line')
        const noRun = failed(
          await s.program({ source: 'export const x = 1\n' }),
          'invalid_argument',
        )
        check(/export default async function run/.test(noRun.output), noRun.output)
        const lookalike = failed(
          await s.program({ source: "throw new RangeError('out of memory')" }),
          'invalid_argument',
        )
        same(lookalike.metadata?.limit, undefined, 'a script error named like a limit is no limit')
        const nonError = failed(
          await s.program({ source: 'throw { code: 7 }' }),
          'invalid_argument',
        )
        check(/\{"code":7\}/.test(nonError.output), nonError.output)
      }),
  },
  {
    name: 'allowed_tools narrows; program can never call program',
    run: (env) =>
      withSession(env, async (s) => {
        const r = ok(
          await s.program({
            source: `const w = await ctx.tool('write', { file_path: 'x.txt', content: 'no' })
const p = await ctx.tool('program', { source: 'return 1' })
const r = await ctx.readFile('src/b.ts')
return { w: [w.exitCode, w.errorKind.type, w.output], p: [p.exitCode, p.errorKind.type], r: r.length }`,
            allowedTools: ['read'],
          }),
        )
        same(
          r.metadata?.value,
          {
            w: [1, 'permission_denied', "write is not in this program's allowed_tools"],
            p: [1, 'permission_denied'],
            r: 25,
          },
          'refusals',
        )
        failed(await s.tool('read', { file_path: 'x.txt' }), 'not_found')
        const all = ok(
          await s.program({
            source: "return (await ctx.tool('program', { source: 'return 1' })).output",
          }),
        )
        same(all.metadata?.value, 'program cannot call program', 'program without allowed_tools')
        failed(
          await s.program({ source: 'return 1', allowedTools: ['program'] }),
          'invalid_argument',
        )
      }),
  },
  {
    name: 'the model-side path: a permission deny and hooks hold inside the script',
    run: async (env) => {
      const calls: { tool: string; origin: string; parent: boolean }[] = []
      await withSession(
        env,
        async (s) => {
          const source = `const pub = await ctx.readFile('src/b.ts')
let secret
try { secret = await ctx.readFile('secret/key.txt') } catch (e) { secret = e.errorKind.type }
const blocked = await ctx.tool('ls', { path: 'docs' })
return { pub: pub.length, secret, blocked: blocked.errorKind.type }`
          const governed = ok(await s.governedTool('program', { source }))
          same(
            governed.metadata?.value,
            { pub: 25, secret: 'permission_denied', blocked: 'hook_denied' },
            'governed program',
          )
          // The denied read never reaches the hook: permission rules come first.
          const nested = calls.filter((c) => c.tool !== 'program')
          check(
            nested.length === 2 && nested.every((c) => c.origin === 'nested' && c.parent),
            `nested calls: ${JSON.stringify(calls)}`,
          )
          // Host-direct: its children keep the host's trust (as batch's do); hooks still apply.
          const host = ok(await s.program({ source }))
          same(
            host.metadata?.value,
            { pub: 25, secret: '     1\thunter2', blocked: 'hook_denied' },
            'host-direct program',
          )
        },
        {
          permissions: { deny: ['read(secret/**)'] },
          hooks: {
            preToolUse: (call: ToolCall) => {
              calls.push({
                tool: call.toolName,
                origin: call.origin,
                parent: call.parentCallId !== undefined,
              })
              if (call.toolName === 'ls') return { block: 'no listing' }
            },
          },
        },
      )
    },
  },
  {
    name: 'the guest sees no fetch, fs, process, env or host timers; results are copies',
    run: (env) =>
      withSession(env, async (s) => {
        const r = ok(
          await s.program({
            source: `const names = ['fetch', 'process', 'require', 'setTimeout', 'setInterval', 'queueMicrotask', 'XMLHttpRequest', 'WebSocket', 'Deno', 'Bun', 'navigator', 'importScripts', 'WebAssembly', 'std', 'os', '__iso_call', '__iso_done']
const seen = names.filter((n) => typeof globalThis[n] !== 'undefined')
const g = await ctx.tool.constructor('return globalThis')()
const first = await ctx.tool('read', { file_path: 'src/b.ts' })
first.output = 'changed'; first.metadata.x = 1
const again = await ctx.tool('read', { file_path: 'src/b.ts' })
let imported
try { const spec = ['node', 'fs'].join(':'); await import(spec); imported = 'yes' } catch (e) { imported = e.name }
return { seen, same: g === globalThis, again: again.output, x: again.metadata.x === undefined, frozen: Object.isFrozen(ctx), imported }`,
          }),
        )
        same(
          r.metadata?.value,
          {
            seen: [],
            same: true,
            again: '     1\texport const b = 2',
            x: true,
            frozen: true,
            imported: r.metadata?.value && (r.metadata.value as Record<string, unknown>).imported,
          },
          'guest world',
        )
        check(
          (r.metadata?.value as Record<string, unknown>).imported !== 'yes',
          'import of node:fs',
        )
        const inputs = { list: [1, 2], nested: { a: 'b' } }
        const copy = ok(await s.program({ source: 'inputs.list.push(3); return inputs', inputs }))
        same(inputs, { list: [1, 2], nested: { a: 'b' } }, 'the host inputs are untouched')
        same(copy.metadata?.value, { list: [1, 2, 3], nested: { a: 'b' } }, 'the guest had a copy')
      }),
  },
  {
    name: 'limits: timeout (within 10%), maxToolCalls, maxOutputBytes, stack; the session keeps working',
    run: (env) => {
      const seen = { aborted: 0, started: 0 }
      return withSession(
        env,
        async (s) => {
          const loop = failed(
            await s.program({ source: 'for (;;) {}', limits: { timeoutMs: 1000 } }),
            'timeout',
            'timeout',
          )
          within(loop.metadata?.duration_ms as number, 1000, 'busy loop')
          const toolWait = failed(
            await s.program({ source: "await ctx.tool('wait', {})", limits: { timeoutMs: 1000 } }),
            'timeout',
            'timeout',
          )
          within(toolWait.metadata?.duration_ms as number, 1000, 'time spent in a tool')
          same(
            seen,
            { aborted: 1, started: 1 },
            'the pending tool was cancelled when the program stopped',
          )
          const calls = failed(
            await s.program({
              source:
                "for (let i = 0; i < 100; i++) await ctx.tool('noop', { n: i })\nreturn 'all'",
              limits: { maxToolCalls: 5 },
            }),
            'invalid_argument',
            'max_tool_calls',
          )
          same(calls.metadata?.tool_calls, 6, 'calls counted up to the refused one')
          failed(
            await s.program({
              source: "return 'x'.repeat(5000)",
              limits: { maxOutputBytes: 1000 },
            }),
            'invalid_argument',
            'max_output_bytes',
          )
          ok(
            await s.program({ source: "return 'x'.repeat(990)", limits: { maxOutputBytes: 1000 } }),
          )
          failed(
            await s.program({ source: 'function f(n) { return f(n + 1) + 1 }\nreturn f(0)' }),
            'invalid_argument',
            'stack',
          )
          const caught = await s.program({
            source:
              'function f(n) { return f(n + 1) + 1 }\ntry { f(0) } catch (e) { return e.message }',
          })
          // A browser Web Worker's own stack is smaller than QuickJS's limit: the overflow is
          // still the typed stack limit there, but the guest cannot catch it.
          if (env.smallHostStack === true && caught.exitCode !== 0)
            failed(caught, 'invalid_argument', 'stack')
          else same(ok(caught).metadata?.value, 'stack overflow', 'a caught stack overflow')
          same(ok(await s.program({ source: 'return 6 * 7' })).metadata?.value, 42, 'still works')
        },
        { tools: [waitingTool(seen), noopTool] },
      )
    },
  },
  {
    name: 'limits: memory is capped at 64 MiB whatever the script allocates',
    run: (env) =>
      withSession(env, async (s) => {
        const bombs = [
          'const keep = []\nfor (;;) keep.push(new Uint8Array(1 << 20))',
          'const keep = []\nfor (let i = 0; ; i++) keep.push(new Array(100000).fill(i))',
          "let s = 'ab'\nfor (;;) { s = s + s; s.indexOf('c') }",
          "const keep = []\nfor (let i = 0; ; i++) keep.push('x'.repeat(1 << 16) + i)",
        ]
        for (const source of bombs) {
          const r = await s.program({ source, limits: { timeoutMs: 20_000 } })
          check(r.exitCode === 1, `a memory bomb did not fail: ${source}`)
          const limit = r.metadata?.limit
          const error = r.metadata?.error as Record<string, unknown> | undefined
          check(
            limit === 'memory' ||
              (error !== undefined &&
                /too long|out of memory|invalid array length/i.test(String(error.message))),
            `memory bomb ${source}: ${brief(r)}`,
          )
          check(
            (r.metadata?.memory_bytes as number) <= 64 * MiB,
            `memory_bytes ${String(r.metadata?.memory_bytes)}`,
          )
        }
        same(
          ok(await s.program({ source: 'return new Uint8Array(1 << 20).length' })).metadata?.value,
          1 << 20,
          'after',
        )
      }),
  },
  {
    name: 'cancellation: an AbortSignal and session.close() stop a script and its pending tools',
    run: async (env) => {
      const seen = { aborted: 0, started: 0 }
      const s = await session(env, { tools: [waitingTool(seen)] })
      const controller = new AbortController()
      const running = s.program({
        source: "await Promise.all([ctx.tool('wait', {}), ctx.tool('wait', {})])\nreturn 'done'",
        signal: controller.signal,
      })
      while (seen.started < 2) await new Promise((r) => setTimeout(r, 5))
      controller.abort()
      failed(await running, 'cancelled')
      same(seen.aborted, 2, 'both pending tools saw the cancellation')
      const before = seen.started
      const waiting = s.program({ source: "await ctx.tool('wait', {})\nreturn 'done'" })
      while (seen.started === before) await new Promise((r) => setTimeout(r, 5))
      const started = Date.now()
      await s.close()
      failed(await waiting, 'cancelled')
      check(Date.now() - started < 5000, 'close stopped the program at once')
      same(seen.aborted, 3, 'the pending tool saw the close')
      failed(await s.program({ source: 'return 1' }), 'cancelled')
    },
  },
  {
    name: 'a promise that never settles, and non-JSON return values, are typed failures',
    run: (env) =>
      withSession(env, async (s) => {
        const started = Date.now()
        const never = failed(
          await s.program({ source: 'await new Promise(() => {})' }),
          'invalid_argument',
        )
        check(/never settle/.test(never.output), never.output)
        check(Date.now() - started < 5000, 'found out at once, not at the deadline')
        for (const source of [
          'return () => 1',
          'return 10n',
          'const o = {}; o.o = o; return o',
          'return Symbol("s")',
        ]) {
          const r = failed(await s.program({ source }), 'invalid_argument')
          check(/not JSON/.test(r.output), `${source}: ${r.output}`)
        }
        same(
          ok(await s.program({ source: 'return { f() {}, u: undefined, d: new Date(0), n: NaN }' }))
            .metadata?.value,
          { d: '1970-01-01T00:00:00.000Z', n: null },
          'JSON.stringify semantics inside',
        )
      }),
  },
  {
    name: 'prototype tampering of ctx, Object, Promise and JSON stays inside the program',
    run: (env) =>
      withSession(env, async (s) => {
        const sources = [
          "Object.prototype.toJSON = () => 'hacked'; Object.defineProperty(Object.prototype, 'then', { get() { throw 1 } }); return 1",
          'Promise.prototype.then = function () { return this }; Promise.resolve = null; return 2',
          "JSON.stringify = () => '{}'; JSON.parse = () => ({ output: 'forged' }); return (await ctx.tool('read', { file_path: 'src/b.ts' })).output",
          'try { ctx.tool = null } catch {} ; Object.setPrototypeOf(ctx, null); Function.prototype.call = null; Reflect.apply = null; return typeof ctx.tool',
          'Array.prototype.push = null; Array.prototype.map = null; String.prototype.split = null; ctx.log("a", 1); return "logged"',
          'globalThis.Promise = function () {}; return 3',
        ]
        for (const source of sources) {
          const r = await s.program({ source })
          check(r.exitCode === 0 || r.exitCode === 1, 'a result')
          check(typeof r.output === 'string', 'output')
        }
        same(
          ok(await s.program({ source: 'return [1, 2].map((x) => x * 2)' })).metadata?.value,
          [2, 4],
          'next program is clean',
        )
        same(({} as Record<string, unknown>).toJSON, undefined, 'host Object.prototype untouched')
      }),
  },
  {
    name: 'a busy loop inside a tool callback is stopped like any other',
    run: (env) =>
      withSession(env, async (s) => {
        const r = failed(
          await s.program({
            source:
              "await ctx.tool('read', { file_path: 'src/a.ts' }).then(() => { while (true) {} })",
            limits: { timeoutMs: 1000 },
          }),
          'timeout',
          'timeout',
        )
        within(r.metadata?.duration_ms as number, 1000, 'loop in a callback')
      }),
  },
  {
    name: '10,000 tool calls: refused past maxToolCalls, and served when allowed',
    heavy: true,
    run: (env) =>
      withSession(
        env,
        async (s) => {
          const refused = failed(
            await s.program({
              source: "for (let i = 0; i < 10000; i++) await ctx.tool('noop', { n: i })",
            }),
            'invalid_argument',
            'max_tool_calls',
          )
          same(refused.metadata?.tool_calls, 21, 'default maxToolCalls is 20')
          const served = ok(
            await s.program({
              source: `let n = 0
for (let i = 0; i < 100; i++) {
  const rs = await Promise.all(Array.from({ length: 100 }, (_, j) => ctx.tool('noop', { n: i * 100 + j })))
  n += rs.filter((r) => r.exitCode === 0).length
}
return n`,
              limits: { maxToolCalls: 10_000, timeoutMs: 600_000 },
            }),
          )
          same(served.metadata?.value, 10_000, 'all served')
        },
        { tools: [noopTool] },
      ),
  },
  {
    name: 'a huge return value fails at maxOutputBytes, the host unharmed',
    run: (env) =>
      withSession(env, async (s) => {
        failed(
          await s.program({ source: "return 'x'.repeat(20 * 1024 * 1024)" }),
          'invalid_argument',
          'max_output_bytes',
        )
        failed(
          await s.program({ source: 'return Array.from({ length: 200000 }, (_, i) => ({ i }))' }),
          'invalid_argument',
          'max_output_bytes',
        )
      }),
  },
  {
    name: '300 programs in a row in one session: each answers, nothing stays active',
    run: (env) =>
      withSession(env, async (s) => {
        for (let i = 0; i < 300; i++) {
          const r = await s.program({
            source:
              "const t = await ctx.readFile('src/b.ts')\nif (inputs % 7 === 0) throw new Error('x' + inputs)\nreturn t.length + inputs",
            inputs: i,
          })
          if (i % 7 === 0) failed(r, 'invalid_argument')
          else same(r.metadata?.value, 25 + i, `program ${i}`)
        }
        same(s.activeTools(), [], 'active calls after 300 programs')
      }),
  },
]

/** Run the suite (all cases, or those `filter` keeps) and report each case. */
export async function runProgramCases(
  env: ProgramEnv,
  filter: (c: ProgramCase) => boolean = () => true,
): Promise<ProgramCaseResult[]> {
  const results: ProgramCaseResult[] = []
  for (const c of programCases.filter(filter)) {
    const started = Date.now()
    try {
      await c.run(env)
      results.push({ name: c.name, ok: true, ms: Date.now() - started })
    } catch (error) {
      results.push({
        name: c.name,
        ok: false,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        ms: Date.now() - started,
      })
    }
  }
  return results
}
