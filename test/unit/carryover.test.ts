import { afterEach, describe, expect, it, vi } from 'vitest'
import { Carryover, CARRYOVER_MAX_ENTRIES, CARRYOVER_TTL_MS } from '../../src/kernel/carryover.ts'

describe('Carryover', () => {
  afterEach(() => vi.useRealTimers())

  it('gives a kept value to one taker, and disposes what is replaced or cleared', () => {
    const store = new Carryover()
    const disposed: string[] = []
    store.keep('a', 1, () => disposed.push('a1'))
    store.keep('a', 2, () => disposed.push('a2'))
    expect(disposed).toEqual(['a1'])
    expect(store.take('a')).toBe(2)
    expect(store.take('a')).toBeUndefined()
    store.keep('b', 3, () => disposed.push('b'))
    const epoch = store.epoch
    store.clear()
    expect(store.epoch).toBe(epoch + 1)
    expect(disposed).toEqual(['a1', 'b'])
    expect(store.take('b')).toBeUndefined()
  })

  it('refuses work begun before the last clear, and keeps work begun after it', () => {
    const store = new Carryover()
    const disposed: number[] = []
    const since = store.epoch
    store.clear()
    store.keep('k', 1, () => disposed.push(1), since)
    expect(disposed).toEqual([1])
    expect(store.take('k')).toBeUndefined()
    store.keep('k', 2, () => disposed.push(2), store.epoch)
    expect(store.take('k')).toBe(2)
  })

  it('holds at most CARRYOVER_MAX_ENTRIES, dropping the oldest', () => {
    const store = new Carryover()
    const disposed: number[] = []
    for (let i = 0; i <= CARRYOVER_MAX_ENTRIES; i++) store.keep(`k${i}`, i, () => disposed.push(i))
    expect(disposed).toEqual([0])
    expect(store.take('k0')).toBeUndefined()
    expect(store.take(`k${CARRYOVER_MAX_ENTRIES}`)).toBe(CARRYOVER_MAX_ENTRIES)
  })

  it('drops entries not taken in time, at the next use', () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const store = new Carryover()
    const disposed: string[] = []
    store.keep('old', 1, () => disposed.push('old'))
    vi.setSystemTime(Date.now() + CARRYOVER_TTL_MS - 1)
    store.keep('new', 2, () => disposed.push('new'))
    expect(disposed).toEqual([])
    vi.setSystemTime(Date.now() + 1)
    expect(store.take('new')).toBe(2)
    expect(disposed).toEqual(['old'])
  })

  it('drops entries not taken in time by itself, without being used', () => {
    vi.useFakeTimers()
    const store = new Carryover()
    const disposed: string[] = []
    store.keep('a', 1, () => disposed.push('a'))
    vi.advanceTimersByTime(CARRYOVER_TTL_MS / 2)
    store.keep('b', 2, () => disposed.push('b'))
    vi.advanceTimersByTime(CARRYOVER_TTL_MS / 2 + 5)
    expect(disposed).toEqual(['a'])
    vi.advanceTimersByTime(CARRYOVER_TTL_MS / 2)
    expect(disposed).toEqual(['a', 'b'])
    expect(vi.getTimerCount()).toBe(0)
  })

  it('a dispose that throws does not fail the call that dropped it', () => {
    const store = new Carryover()
    store.keep('k', 1, () => {
      throw new Error('boom')
    })
    expect(() => store.clear()).not.toThrow()
  })
})
