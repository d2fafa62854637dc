import { describe, expect, it } from 'vitest'
import {
  CHANGED_PATHS_MAX_LISTED,
  compareWalkOrder,
  diffSnapshots,
} from '../../src/tools/bash/changed-paths.ts'
import type { TreeEntry, TreeSnapshot } from '../../src/workspace/shell.ts'

function snap(entries: Record<string, string>, truncated = false): TreeSnapshot {
  const map = new Map<string, TreeEntry>()
  for (const path of Object.keys(entries).sort(compareWalkOrder)) {
    const sig = entries[path]!
    map.set(path, { kind: sig.startsWith('dir') ? 'directory' : 'file', signature: sig })
  }
  return { entries: map, truncated }
}

describe('changed paths', () => {
  it('orders paths as a sorted depth-first walk', () => {
    expect(['b', 'a/z', 'a', 'a.txt', 'a/b/c'].sort(compareWalkOrder)).toEqual([
      'a',
      'a/b/c',
      'a/z',
      'a.txt',
      'b',
    ])
  })

  it('reports created, modified and deleted paths; directories only when added or removed', () => {
    const before = snap({ d: 'dir', 'd/keep': '1', 'd/mod': '1', gone: '1', old: 'dir' })
    const after = snap({ d: 'dir-changed', 'd/keep': '1', 'd/mod': '2', new: '1', 'new2/x': '1' })
    const diff = diffSnapshots(before, after)
    expect(diff).toEqual({
      created: ['new', 'new2/x'],
      modified: ['d/mod'],
      deleted: ['gone', 'old'],
      counts: { created: 2, modified: 1, deleted: 2 },
      truncated: false,
      scanned: 5,
    })
  })

  it('claims nothing past the point where a bounded walk stopped', () => {
    // The walk before stopped after "c": "d" and "e" were never seen before the command.
    const before = snap({ a: '1', b: '1', c: '1' }, true)
    const after = snap({ a: '2', c: '1', d: '1', e: '1' })
    const diff = diffSnapshots(before, after)
    expect(diff.created).toEqual([])
    expect(diff.modified).toEqual(['a'])
    expect(diff.deleted).toEqual(['b'])
    expect(diff.truncated).toBe(true)
  })

  it('lists at most CHANGED_PATHS_MAX_LISTED paths per kind but counts them all', () => {
    const after: Record<string, string> = {}
    for (let i = 0; i < CHANGED_PATHS_MAX_LISTED + 5; i++)
      after[`f${String(i).padStart(5, '0')}`] = '1'
    const diff = diffSnapshots(snap({}), snap(after))
    expect(diff.created).toHaveLength(CHANGED_PATHS_MAX_LISTED)
    expect(diff.counts.created).toBe(CHANGED_PATHS_MAX_LISTED + 5)
    expect(diff.truncated).toBe(true)
  })
})
