import { describe, expect, it } from 'vitest'
import { decodeCursor, encodeCursor } from '../../src/paging/cursor.ts'

describe('cursors', () => {
  it('round-trip and are URL-safe', () => {
    const cursor = encodeCursor('ls', { p: 'dir/日本', a: 'name with spaces' })
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeCursor('ls', cursor)).toMatchObject({ p: 'dir/日本', a: 'name with spaces' })
  })

  it('refuse forged, truncated, foreign and oversized cursors', () => {
    const cursor = encodeCursor('ls', { p: '', a: 'x' })
    for (const bad of [
      '',
      'abc',
      cursor.slice(0, -4),
      cursor + '!',
      btoa('{"v":2,"k":"ls"}'),
      'A'.repeat(9000),
    ]) {
      expect(() => decodeCursor('ls', bad), bad.slice(0, 20)).toThrow(/invalid cursor/)
    }
    expect(() => decodeCursor('search', cursor)).toThrow(/different listing/)
  })
})
