/**
 * The most elements a natively looping built-in may walk when the guest runs on the host's own
 * thread (workerd, browsers): 2^22. QuickJS's interrupt handler never runs inside a C built-in,
 * so `Array.prototype.includes.call({ length: 2 ** 40 }, 1)` would hold the thread for hours; with
 * this bound one such call walks at most ~4 million elements (a fraction of a second to about a
 * second on a loaded machine). A dense array that long is already half the 64 MiB guest memory.
 */
export const NATIVE_LOOP_BOUND = 2 ** 22

/**
 * Evaluated in the guest before the prelude when it runs on the host's thread. It replaces each
 * `Array.prototype` method that loops over `length` in C with a wrapper that reads the length the
 * way the built-in will (a plain data property, no proxy, no getter, so it cannot change between
 * the check and the call) and throws a `RangeError` above {@link NATIVE_LOOP_BOUND}; `flat` and
 * `flatMap` (which recurse into nested arrays natively) become JavaScript loops the interrupt
 * handler reaches; array iterators step through JavaScript, so iterator helpers (`drop`, `some`,
 * ...) that drive them reach it too. Every `Proxy` made by the guest is recorded so that a trap
 * can never stand in for a length.
 */
export const NATIVE_BOUNDS_PRELUDE = String.raw`(() => {
  'use strict'
  const CAP = ${NATIVE_LOOP_BOUND}
  const g = globalThis, AP = Array.prototype, O = Object
  const apply = Reflect.apply, getDesc = O.getOwnPropertyDescriptor, getProto = O.getPrototypeOf
  const define = O.defineProperty, isArray = Array.isArray, hasOwn = O.prototype.hasOwnProperty
  const own = (o, k) => apply(hasOwn, o, [k])
  const WS = WeakSet.prototype, wsHas = WS.has, wsAdd = WS.add
  const proxies = new WeakSet()
  const TAP = getProto(Uint8Array.prototype)
  const taLength = getDesc(TAP, 'length').get
  const MAX = 9007199254740991
  const toLength = (v) => { const n = +v; return n !== n || n <= 0 ? 0 : n > MAX ? MAX : n - (n % 1) }
  const bad = (name) => {
    throw new TypeError(name + ': on this runtime an array-like needs a plain length (no getter, no proxy)')
  }
  /** The length a built-in will read from o, or a TypeError where it could change after the check. */
  const lengthOf = (o, name) => {
    if (o === null || o === undefined) return 0
    let p = O(o)
    for (let depth = 0; p !== null; depth++) {
      if (apply(wsHas, proxies, [p]) || depth > 4096) bad(name)
      const d = getDesc(p, 'length')
      if (d !== undefined) {
        if (own(d, 'get')) {
          if (d.get === taLength) return apply(taLength, o, [])
          bad(name)
        }
        const v = d.value
        if (v !== null && (typeof v === 'object' || typeof v === 'function')) bad(name)
        return typeof v === 'bigint' || typeof v === 'symbol' ? 0 : toLength(v)
      }
      p = getProto(p)
    }
    return 0
  }
  const check = (name, len) => {
    if (len > CAP) {
      throw new RangeError(name + ': ' + len + ' elements is over this runtime\'s bound of ' + CAP +
        ' for built-ins that loop natively')
    }
  }
  const setMethod = (target, key, fn) => {
    define(target, key, { value: fn, writable: true, enumerable: false, configurable: true })
  }
  const bound = (target, key, label) => {
    const native = target[key]
    const wrapped = {
      [key](...args) {
        check(label, lengthOf(this, label))
        return apply(native, this, args)
      },
    }[key]
    setMethod(target, key, wrapped)
  }
  for (const key of ['includes', 'indexOf', 'lastIndexOf', 'join', 'toLocaleString', 'fill',
    'reverse', 'copyWithin', 'forEach', 'map', 'filter', 'some', 'every', 'reduce', 'reduceRight',
    'find', 'findIndex', 'findLast', 'findLastIndex', 'sort', 'splice', 'shift', 'unshift', 'slice',
    'with', 'toReversed', 'toSorted', 'toSpliced']) {
    if (typeof AP[key] === 'function') bound(AP, key, 'Array.prototype.' + key)
  }
  for (const key of ['sort', 'toSorted']) {
    if (typeof TAP[key] === 'function') bound(TAP, key, '%TypedArray%.prototype.' + key)
  }
  const concat = AP.concat
  setMethod(AP, 'concat', {
    concat(...items) {
      let total = lengthOf(this, 'Array.prototype.concat')
      for (const item of items) {
        if (item !== null && (typeof item === 'object' || typeof item === 'function')) {
          total += lengthOf(item, 'Array.prototype.concat')
        } else total += 1
        check('Array.prototype.concat', total)
      }
      check('Array.prototype.concat', total)
      return apply(concat, this, items)
    },
  }.concat)
  const put = (out, v) => { define(out, out.length, { value: v, writable: true, enumerable: true, configurable: true }) }
  const flatInto = (out, src, depth) => {
    const len = toLength(src.length)
    for (let i = 0; i < len; i++) {
      if (!(i in src)) continue
      const v = src[i]
      if (depth > 0 && isArray(v)) flatInto(out, v, depth - 1)
      else put(out, v)
    }
  }
  setMethod(AP, 'flat', {
    flat(depth) {
      const o = O(this === null || this === undefined ? bad('Array.prototype.flat') : this)
      const d = depth === undefined ? 1 : +depth
      const out = []
      flatInto(out, o, d !== d || d < 0 ? 0 : d)
      return out
    },
  }.flat)
  setMethod(AP, 'flatMap', {
    flatMap(fn, thisArg) {
      const o = O(this === null || this === undefined ? bad('Array.prototype.flatMap') : this)
      if (typeof fn !== 'function') throw new TypeError('Array.prototype.flatMap: not a function')
      const len = toLength(o.length)
      const out = []
      for (let i = 0; i < len; i++) {
        if (!(i in o)) continue
        const v = apply(fn, thisArg, [o[i], i, o])
        if (isArray(v)) flatInto(out, v, 0)
        else put(out, v)
      }
      return out
    },
  }.flatMap)
  // Array iterators step through JavaScript, so a helper driving one natively is interruptible.
  const AIP = getProto([][Symbol.iterator]())
  const next = AIP.next
  setMethod(AIP, 'next', { next() { return apply(next, this, []) } }.next)
  const RealProxy = g.Proxy, revocable = RealProxy.revocable
  const record = (p) => { apply(wsAdd, proxies, [p]); return p }
  function Proxy(target, handler) {
    if (new.target === undefined) throw new TypeError("Constructor Proxy requires 'new'")
    return record(new RealProxy(target, handler))
  }
  setMethod(Proxy, 'revocable', {
    revocable(target, handler) {
      const r = apply(revocable, RealProxy, [target, handler])
      record(r.proxy)
      return r
    },
  }.revocable)
  setMethod(g, 'Proxy', Proxy)
})()`
