// The bound for guests on the host's own thread (workerd, browsers; `inlineProgramRunner`): the
// built-ins that loop natively refuse lengths over NATIVE_LOOP_BOUND at once, lengths that could
// change after the check (getters, proxies) are refused, and nested or iterator-driven loops reach
// the interrupt handler. Driven in Node on the inline runner; workerd.test.ts shows it in workerd.
import { describe, expect, it } from 'vitest'
import { inlineProgramRunner, NATIVE_LOOP_BOUND } from '../../adapters/index.ts'
import { nodeQuickJs } from '../../adapters/node/index.ts'
import type { ProgramOutcome } from '../../src/index.ts'
import { HOSTILE } from './hostile-cases.ts'

const run = (source: string, timeoutMs = 1000): Promise<ProgramOutcome> =>
  inlineProgramRunner.run(
    nodeQuickJs,
    { source, filename: 'program.js', isModule: false },
    'null',
    { timeoutMs, maxToolCalls: 0, maxOutputBytes: 10_000 },
    { signal: new AbortController().signal, callTool: () => Promise.reject(new Error('none')) },
  )

const expectQuickError = async (source: string, name: string) => {
  const started = performance.now()
  const outcome = await run(source)
  expect(performance.now() - started).toBeLessThan(3_000)
  expect(outcome.status, JSON.stringify(outcome)).toBe('error')
  expect(outcome.status === 'error' && outcome.errorName).toBe(name)
}

describe('native-loop bounds on the inline runner', () => {
  for (const source of HOSTILE) {
    it(`${source} is a RangeError at once`, () => expectQuickError(source, 'RangeError'), 30_000)
  }

  const refused: [string, string][] = [
    ['return [].concat(new Array(2 ** 32 - 1))', 'RangeError'],
    ['return [].forEach.call({ length: 2 ** 40 }, Boolean)', 'RangeError'],
    ['return [].find.call({ length: 2 ** 40 }, Boolean)', 'RangeError'],
    ['return [].sort.call({ length: 2 ** 40 })', 'RangeError'],
    ['return new Array(2 ** 32 - 1).reverse().length', 'RangeError'],
    [
      'let n = 0; return [].includes.call({ get length() { return n++ ? 2 ** 40 : 1 } }, 1)',
      'TypeError',
    ],
    [
      "return [].indexOf.call(new Proxy({}, { get: (t, k) => (k === 'length' ? 2 ** 40 : undefined) }), 1)",
      'TypeError',
    ],
    ['return [].lastIndexOf.call({ length: { valueOf: () => 2 ** 40 } }, 1)', 'TypeError'],
  ]
  for (const [source, name] of refused) {
    it(`${source} is a ${name} at once`, () => expectQuickError(source, name), 30_000)
  }

  const interrupted = [
    'return [new Array(2 ** 32 - 1)].flat().length',
    'return [1].flatMap(() => new Array(2 ** 32 - 1)).length',
    'return new Array(2 ** 32 - 1).keys().drop(2 ** 40).next()',
    '(function () { return arguments[Symbol.iterator] })().call({ length: 2 ** 32 - 1 }).some(Boolean)',
  ]
  for (const source of interrupted) {
    it(`${source} reaches the interrupt handler`, async () => {
      const started = performance.now()
      const outcome = await run(source, 500)
      expect(performance.now() - started).toBeLessThan(10_000)
      expect(outcome.status).toBe('limit')
      expect(outcome.status === 'limit' && outcome.limit).toBe('timeout')
    }, 30_000)
  }

  it('ordinary use is unchanged', async () => {
    const outcome = await run(`
      const a = [3, 1, 2]
      const p = new Proxy([1, 2], {})
      const r = Proxy.revocable({}, {})
      return [
        a.includes(2), a.indexOf(1), a.lastIndexOf(3), a.join('-'), [...a].sort().join(''),
        [[1, [2]], 3].flat(Infinity), [1, 2].flatMap((x) => [x, x * 10]), [1].concat([2], 3),
        Array.from({ length: 3 }, (_, i) => i), [...new Array(3).keys()], p.length, typeof r.revoke,
        [].includes.call('abc', 'b'), Array.prototype.join.call(new Uint8Array([1, 2])),
        new Array(${NATIVE_LOOP_BOUND}).indexOf(1), [1, 2, 3].values().drop(1).toArray(),
      ]`)
    expect(outcome.status, JSON.stringify(outcome)).toBe('ok')
    expect(outcome.status === 'ok' && JSON.parse(outcome.valueJson!)).toEqual([
      true,
      1,
      0,
      '3-1-2',
      '123',
      [1, 2, 3],
      [1, 10, 2, 20],
      [1, 2, 3],
      [0, 1, 2],
      [0, 1, 2],
      2,
      'function',
      true,
      '1,2',
      -1,
      [2, 3],
    ])
  }, 30_000)
})
