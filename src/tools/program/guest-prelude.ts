/**
 * Evaluated in the guest before the program: takes the host functions off the global object,
 * builds `ctx` and `console`, and evaluates to the function that starts the program. Host
 * results arrive as JSON strings and are parsed here, so the guest only ever holds copies.
 */
export const GUEST_PRELUDE = String.raw`(() => {
  'use strict'
  const g = globalThis
  const hostCall = g.__iso_call, hostLog = g.__iso_log, hostDone = g.__iso_done, hostFail = g.__iso_fail
  delete g.__iso_call; delete g.__iso_log; delete g.__iso_done; delete g.__iso_fail
  const stringify = JSON.stringify, parse = JSON.parse, toStr = String, isArray = Array.isArray
  const freeze = Object.freeze, assign = Object.assign, apply = Reflect.apply
  const P = Promise, promiseResolve = P.resolve, promiseThen = P.prototype.then
  const then = (p, onValue, onError) => apply(promiseThen, p, [onValue, onError])
  const text = (v) => {
    if (typeof v === 'string') return v
    try { const s = stringify(v); return s === undefined ? toStr(v) : s } catch { return toStr(v) }
  }
  const log = (...args) => { hostLog(args.map(text).join(' ')) }
  // Calls waiting for the host, by id (no prototype: tampering with Map or Object cannot reach it).
  const waiting = Object.create(null)
  let lastId = 0
  const settle = (id, json) => {
    const resolve = waiting[id]
    if (resolve !== undefined) {
      delete waiting[id]
      resolve(json)
    }
  }
  const tool = (name, args) => {
    if (typeof name !== 'string') return P.reject(new TypeError('ctx.tool(name, args): name must be a string'))
    const json = stringify(args === undefined ? {} : args)
    if (json === undefined) return P.reject(new TypeError('ctx.tool(name, args): args must be JSON'))
    const id = ++lastId
    const answer = new P((resolve) => { waiting[id] = resolve })
    hostCall(name, json, id)
    return then(answer, parse)
  }
  class ToolError extends Error {
    constructor(result) {
      super(result.output)
      this.name = 'ToolError'
      this.exitCode = result.exitCode
      this.errorKind = result.errorKind
    }
  }
  const ok = (result) => { if (result.exitCode !== 0) throw new ToolError(result); return result }
  const pick = (options) => (options && typeof options === 'object' ? options : {})
  const ctx = freeze({
    tool,
    async readFile(path, options) {
      return ok(await tool('read', assign({}, pick(options), { file_path: path }))).output
    },
    async grep(query, options) {
      return ok(await tool('search', assign({}, pick(options), { mode: 'grep', query }))).output
    },
    async glob(pattern, options) {
      const paths = []
      let cursor
      do {
        const page = ok(await tool('search', assign({}, pick(options), { mode: 'glob', query: pattern, limit: 1000 }, cursor ? { cursor } : {})))
        const found = page.metadata && page.metadata.paths
        if (isArray(found)) for (const p of found) paths.push(p)
        cursor = page.metadata && page.metadata.next_cursor
      } while (typeof cursor === 'string' && cursor !== '')
      return paths
    },
    async ls(path) {
      return tool('ls', path === undefined ? {} : { path })
    },
    log,
  })
  g.console = freeze({ log, info: log, warn: log, error: log, debug: log })
  const describe = (e) => {
    try {
      if (e !== null && typeof e === 'object' && typeof e.message === 'string') {
        return [toStr(e.name ?? 'Error'), e.message, toStr(e.stack ?? '')]
      }
      return ['Error', 'the program threw ' + text(e), '']
    } catch {
      return ['Error', 'the program threw a value that cannot be shown', '']
    }
  }
  const tooBig = (max) => {
    hostFail('OutputLimitError', 'the return value is over maxOutputBytes (' + max + ' bytes of JSON)', '')
  }
  const serialize = (v) => {
    if (v === undefined) return undefined
    if (typeof v === 'function' || typeof v === 'symbol') {
      throw new TypeError('the program returned a ' + typeof v + ', which is not JSON')
    }
    return stringify(v)
  }
  const start = (entry, isModule, inputsJson, maxOutputBytes) => {
    const started = then(apply(promiseResolve, P, [entry]), (loaded) => {
      const run = isModule ? loaded.default : loaded
      if (typeof run !== 'function') {
        throw new TypeError('the program must export default async function run(ctx, inputs)')
      }
      return run(ctx, parse(inputsJson))
    })
    then(
      started,
      (value) => {
        if (typeof value === 'string' && value.length > maxOutputBytes) return tooBig(maxOutputBytes)
        let json
        try { json = serialize(value) } catch (e) {
          const d = describe(e)
          if (d[0] === 'InternalError') hostFail(d[0], d[1], d[2])
          else hostFail('ReturnValueError', 'the return value is not JSON: ' + d[1], '')
          return
        }
        if (json !== undefined && json.length > maxOutputBytes) return tooBig(maxOutputBytes)
        hostDone(json)
      },
      (e) => { const d = describe(e); hostFail(d[0], d[1], d[2]) },
    )
  }
  return [start, settle]
})()`

/** Keys the prelude removes from the guest's global object. */
export const HOST_FUNCTIONS = ['__iso_call', '__iso_log', '__iso_done', '__iso_fail'] as const
