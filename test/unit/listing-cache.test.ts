import { describe, expect, it } from 'vitest'
import { ListingCache, type DirStamp } from '../../adapters/node/listing-cache.ts'

const stamp = (over: Partial<DirStamp> = {}): DirStamp => ({
  dev: 1,
  ino: 7,
  ctimeMs: 1_000,
  mtimeMs: 1_000,
  ...over,
})
const listing = (...names: string[]) => ({
  names,
  kinds: new Map(names.map((n) => [n, 'file' as const])),
  entries: names.map((name) => ({ name, kind: 'file' as const })),
})

describe('ListingCache', () => {
  it('serves a listing while its directory stamp is unchanged, and drops it on any change', () => {
    const cache = new ListingCache({ maxNames: 100, settleMs: 2000 })
    const kept = listing('a', 'b')
    cache.put('/r/d', stamp(), kept, 10_000)
    expect(cache.get('/r/d', stamp())).toBe(kept)
    for (const changed of [{ ino: 8 }, { dev: 2 }, { ctimeMs: 1_001 }, { mtimeMs: 999 }]) {
      cache.put('/r/d', stamp(), kept, 10_000)
      expect(cache.get('/r/d', stamp(changed)), JSON.stringify(changed)).toBeUndefined()
      // A miss forgets the old listing: the old stamp does not bring it back.
      expect(cache.get('/r/d', stamp())).toBeUndefined()
    }
    expect(cache.get('/r/other', stamp())).toBeUndefined()
  })

  it('keeps no listing of a directory changed within the settle time before the listing began', () => {
    const cache = new ListingCache({ maxNames: 100, settleMs: 2000 })
    // Changed 2 s before: a later change cannot share its timestamp.
    cache.put('/r/old', stamp({ ctimeMs: 7_999, mtimeMs: 7_999 }), listing('a'), 10_000)
    expect(cache.get('/r/old', stamp({ ctimeMs: 7_999, mtimeMs: 7_999 }))).toBeDefined()
    for (const recent of [
      { ctimeMs: 8_000, mtimeMs: 1_000 },
      { ctimeMs: 1_000, mtimeMs: 8_000 },
      { ctimeMs: 12_000, mtimeMs: 12_000 },
    ]) {
      cache.put('/r/new', stamp(recent), listing('a'), 10_000)
      expect(cache.get('/r/new', stamp(recent)), JSON.stringify(recent)).toBeUndefined()
    }
    // A recent listing replaces an older kept one instead of leaving it behind.
    cache.put('/r/old', stamp({ ctimeMs: 7_999, mtimeMs: 7_999 }), listing('a', 'b'), 8_000)
    expect(cache.get('/r/old', stamp({ ctimeMs: 7_999, mtimeMs: 7_999 }))).toBeUndefined()
  })

  it('holds at most maxNames names, dropping the oldest listings first', () => {
    const cache = new ListingCache({ maxNames: 5, settleMs: 0 })
    cache.put('/1', stamp(), listing('a', 'b'), 10_000)
    cache.put('/2', stamp(), listing('a', 'b'), 10_000)
    cache.put('/3', stamp(), listing('a', 'b'), 10_000)
    expect(cache.get('/1', stamp())).toBeUndefined()
    expect(cache.get('/2', stamp())).toBeDefined()
    expect(cache.get('/3', stamp())).toBeDefined()
    cache.put('/big', stamp(), listing('a', 'b', 'c', 'd', 'e', 'f'), 10_000)
    expect(cache.get('/big', stamp())).toBeUndefined()
    expect(cache.size).toBe(2)
    // Replacing a listing counts its names once.
    for (let i = 0; i < 10; i++) cache.put('/2', stamp(), listing('a', 'b'), 10_000)
    expect(cache.size).toBe(2)
    expect(cache.get('/3', stamp())).toBeDefined()
  })
})
