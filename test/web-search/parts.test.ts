// web_search's parts on their own: URL clean-up and redirect wrappers, the breaker's states with an
// injected clock, coalescing when every waiter leaves, the bulkhead and the retry budget.
import { describe, expect, it } from 'vitest'
import { Bulkhead } from '../../src/tools/web-search/bulkhead.ts'
import { CircuitBreaker } from '../../src/tools/web-search/circuit-breaker.ts'
import { Coalescer } from '../../src/tools/web-search/coalescer.ts'
import { parseRetryAfter } from '../../src/tools/web-search/engine-failure.ts'
import { cleanResultUrl, dedupeKey } from '../../src/tools/web-search/normalize-url.ts'
import { RetryBudget } from '../../src/tools/web-search/retry-budget.ts'

describe('result URLs', () => {
  it('unwraps Google, DuckDuckGo and Bing redirect wrappers', () => {
    expect(cleanResultUrl('https://www.google.com/url?q=https://a.example/x%3Fy%3D1&sa=U')).toBe(
      'https://a.example/x?y=1',
    )
    expect(
      cleanResultUrl(
        '//duckduckgo.com/l/?uddg=https%3A%2F%2Fb.example%2Fp&rut=1',
        'https://html.duckduckgo.com/',
      ),
    ).toBe('https://b.example/p')
    const bing = `https://www.bing.com/ck/a?!&&p=1&u=a1${btoa('https://c.example/q').replaceAll('=', '')}&ntb=1`
    expect(cleanResultUrl(bing)).toBe('https://c.example/q')
  })

  it('drops fragments, tracking parameters and credentials; refuses non-http(s)', () => {
    expect(cleanResultUrl('https://u:p@a.example/x?utm_source=s&id=2&gclid=3#top')).toBe(
      'https://a.example/x?id=2',
    )
    expect(cleanResultUrl('javascript:alert(1)')).toBeUndefined()
    expect(cleanResultUrl('data:text/html,x')).toBeUndefined()
    expect(cleanResultUrl('not a url')).toBeUndefined()
  })

  it('treats www., a trailing slash, the scheme and parameter order as the same page', () => {
    expect(dedupeKey('https://www.a.example/x/?b=2&a=1')).toBe(
      dedupeKey('http://a.example/x?a=1&b=2'),
    )
    expect(dedupeKey('https://a.example/x')).not.toBe(dedupeKey('https://a.example/y'))
  })

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('120', 0)).toBe(120_000)
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).toBe(60_000)
    expect(parseRetryAfter('soon', 0)).toBeUndefined()
    expect(parseRetryAfter(null, 0)).toBeUndefined()
  })
})

describe('CircuitBreaker', () => {
  it('goes closed → open → half-open (one probe at a time) → open again for twice as long → closed', () => {
    let now = 0
    const b = new CircuitBreaker({ now: () => now, openMs: 1_000 })
    b.record('e', 'timeout')
    expect(b.state('e')).toBe('closed')
    b.record('e', 'transport')
    expect(b.state('e')).toBe('open')
    expect(b.admit('e')).toEqual({ allowed: false, retryInMs: 1_000 })
    now = 1_000
    expect(b.state('e')).toBe('half_open')
    expect(b.admit('e')).toEqual({ allowed: true, probe: true })
    expect(b.admit('e').allowed).toBe(false)
    b.record('e', 'timeout')
    expect(b.snapshot('e')).toMatchObject({ state: 'open', trips: 2, open_remaining_ms: 2_000 })
    now = 3_000
    expect(b.admit('e')).toEqual({ allowed: true, probe: true })
    b.record('e', 'success')
    expect(b.snapshot('e')).toMatchObject({ state: 'closed', trips: 0, consecutive_failures: 0 })
  })

  it('opens at once on quota, permission and rate limits, for the Retry-After when one was sent', () => {
    let now = 0
    const b = new CircuitBreaker({ now: () => now })
    b.record('q', 'quota')
    b.record('p', 'permission')
    b.record('r', 'rate_limited', 5_000)
    expect([b.state('q'), b.state('p'), b.state('r')]).toEqual(['open', 'open', 'open'])
    expect(b.snapshot('r')).toMatchObject({ open_remaining_ms: 5_000, retry_after_ms: 5_000 })
    now = 5_000
    expect(b.state('r')).toBe('half_open')
    expect(b.state('q')).toBe('open')
  })

  it('ignores outcomes that say nothing of the engine (cancelled, skipped)', () => {
    const b = new CircuitBreaker({ now: () => 0 })
    for (let i = 0; i < 5; i++) b.record('e', 'cancelled')
    b.record('e', 'missing_key')
    expect(b.state('e')).toBe('closed')
  })
})

describe('Coalescer', () => {
  it('aborts the shared run only when every waiter has left', async () => {
    const c = new Coalescer<string>()
    let aborted = false
    const work = (signal: AbortSignal) =>
      new Promise<string>((resolve) => {
        signal.addEventListener('abort', () => {
          aborted = true
          resolve('stopped')
        })
      })
    const a = new AbortController()
    const b = new AbortController()
    const first = c.run('k', a.signal, work).catch((e: Error) => e.name)
    const second = c.run('k', b.signal, work).catch((e: Error) => e.name)
    a.abort()
    await first
    expect(aborted).toBe(false)
    b.abort()
    await second
    expect(aborted).toBe(true)
    expect(c.snapshot()).toMatchObject({
      leader_requests: 1,
      shared_requests: 1,
      abandoned_requests: 2,
      in_flight: 0,
    })
  })

  it('bypasses coalescing past its in-flight bound', async () => {
    const c = new Coalescer<number>(1)
    const never = new AbortController().signal
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const lead = c.run('a', never, async () => (await gate, 1))
    const other = await c.run('b', never, async () => 2)
    expect(other).toMatchObject({ value: 2, role: 'bypass' })
    release()
    expect((await lead).role).toBe('leader')
  })
})

describe('Bulkhead and RetryBudget', () => {
  it('lets at most `limit` holders in, the rest in order, and drops a waiter that leaves', async () => {
    const b = new Bulkhead(1)
    const never = new AbortController().signal
    const r1 = await b.acquire(never)
    const leaving = new AbortController()
    const gone = b.acquire(leaving.signal).then(
      () => 'got',
      () => 'left',
    )
    const next = b.acquire(never)
    expect(b.waiting).toBe(2)
    leaving.abort()
    expect(await gone).toBe('left')
    r1()
    const r2 = await next
    expect(b.inUse).toBe(1)
    r2()
    expect(b.inUse).toBe(0)
  })

  it('spends retries until none is left and earns them back slowly', () => {
    const r = new RetryBudget(2, 0.5)
    expect([r.tryRetry(), r.tryRetry(), r.tryRetry()]).toEqual([true, true, false])
    r.onSuccess()
    expect(r.tryRetry()).toBe(false)
    r.onSuccess()
    expect(r.tryRetry()).toBe(true)
  })
})
