// git's abbreviation length and upstream naming rules, as pure functions.
import { describe, expect, it } from 'vitest'
import {
  autoAbbrevLength,
  configuredAbbrev,
  packIndexOids,
  uniqueAbbrevLength,
} from '../../src/tools/git/abbrev.ts'
import { shortenRef, trackingRef } from '../../src/tools/git/isomorphic-backend.ts'

describe('abbreviation length', () => {
  it('is 7 up to 2^14 - 1 packed objects, then one digit more per factor of 4', () => {
    expect(autoAbbrevLength(0)).toBe(7)
    expect(autoAbbrevLength(2 ** 14 - 1)).toBe(7)
    expect(autoAbbrevLength(2 ** 14)).toBe(8)
    expect(autoAbbrevLength(2 ** 16 - 1)).toBe(8)
    expect(autoAbbrevLength(2 ** 16)).toBe(9)
    expect(autoAbbrevLength(10_000_000)).toBe(12)
  })

  it('reads core.abbrev as git does', () => {
    expect(configuredAbbrev(undefined)).toBe(-1)
    expect(configuredAbbrev('auto')).toBe(-1)
    expect(configuredAbbrev('no')).toBe(40)
    expect(configuredAbbrev(false)).toBe(40)
    expect(configuredAbbrev('12')).toBe(12)
    expect(configuredAbbrev('3')).toBe(-1)
  })

  it('extends past the longest prefix another object shares, ignoring the oid itself', () => {
    const oid = '2acdf8c3fcad86d099bb3b6ad2681f48796f595e'
    expect(uniqueAbbrevLength(oid, 7, [oid, '2acdf8cd8e282f7e089b2af87485fbfd6d524436'])).toBe(8)
    expect(uniqueAbbrevLength(oid, 7, ['2acdf81111111111111111111111111111111111'])).toBe(7)
    expect(uniqueAbbrevLength(oid, 40, [])).toBe(40)
  })

  it('refuses a truncated pack index', () => {
    expect(() => packIndexOids(new Uint8Array(100))).toThrow()
  })
})

describe('upstream names', () => {
  it('maps a merge ref through fetch refspecs (globs, exact, negative)', () => {
    const specs = ['+refs/heads/*:refs/remotes/origin/*']
    expect(trackingRef(specs, 'refs/heads/main')).toBe('refs/remotes/origin/main')
    expect(trackingRef(['refs/heads/a:refs/remotes/o/b'], 'refs/heads/a')).toBe('refs/remotes/o/b')
    expect(trackingRef([...specs, '^refs/heads/main'], 'refs/heads/main')).toBeUndefined()
    expect(trackingRef(['+refs/tags/*:refs/tags/*'], 'refs/heads/main')).toBeUndefined()
  })

  it('shortens a ref unless a more literal rule names another ref', async () => {
    const none = async () => false
    expect(await shortenRef('refs/remotes/origin/main', none)).toBe('origin/main')
    expect(await shortenRef('refs/heads/main', none)).toBe('main')
    const branchToo = async (name: string) => name === 'refs/heads/origin/main'
    expect(await shortenRef('refs/remotes/origin/main', branchToo)).toBe('remotes/origin/main')
  })
})
