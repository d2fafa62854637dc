import { type BigIntStats, lstatSync, readdirSync } from 'node:fs'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'
import type { TreeEntry, TreeSnapshot } from '../../src/workspace/shell.ts'

// The Node shell's snapshot of the workspace tree, taken before and after a command to report
// the paths it created, modified or deleted.

/** Longest stretch the workspace walk runs without yielding to the event loop (ms). */
const WALK_SLICE_MS = 8

/** A directory's sorted names, none when it cannot be read. */
function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir).sort()
  } catch {
    return []
  }
}

/** What `s` is, and a signature that changes whenever the entry does. */
function treeEntry(s: BigIntStats): TreeEntry {
  const kind = s.isDirectory()
    ? 'directory'
    : s.isFile()
      ? 'file'
      : s.isSymbolicLink()
        ? 'symlink'
        : 'other'
  return { kind, signature: `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}` }
}

/**
 * Every entry below `root` (`.git` directories left out), in walk order, up to `maxEntries`.
 * Synchronous lstat is several times faster than its promise form for many small entries; the
 * walk yields to the event loop every {@link WALK_SLICE_MS} so it never blocks it for long.
 */
export async function snapshotTree(
  root: string,
  { maxEntries, signal }: { maxEntries: number; signal?: AbortSignal },
): Promise<TreeSnapshot> {
  const entries = new Map<string, TreeEntry>()
  let truncated = false
  const stack = [{ dir: root, prefix: '', names: namesIn(root), next: 0 }]
  let sliceStart = performance.now()
  while (stack.length > 0) {
    if (signal?.aborted) {
      // Stopped early: like a walk cut by its bound, it reports what it saw.
      truncated = true
      break
    }
    const top = stack[stack.length - 1]!
    if (top.next >= top.names.length) {
      stack.pop()
      continue
    }
    const name = top.names[top.next++]!
    const abs = nodePath.join(top.dir, name)
    let s
    try {
      s = lstatSync(abs, { bigint: true })
    } catch {
      continue
    }
    if (name === '.git' && s.isDirectory()) continue
    if (entries.size >= maxEntries) {
      truncated = true
      break
    }
    const path = top.prefix === '' ? name : `${top.prefix}/${name}`
    const entry = treeEntry(s)
    entries.set(path, entry)
    if (entry.kind === 'directory')
      stack.push({ dir: abs, prefix: path, names: namesIn(abs), next: 0 })
    if (performance.now() - sliceStart > WALK_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      sliceStart = performance.now()
    }
  }
  return { entries, truncated }
}
