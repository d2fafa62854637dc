import { lstat, readFile, readlink } from 'node:fs/promises'
import * as nodePath from 'node:path'
import { IsoagentError, type GitSignature } from '../../../src/index.ts'
import type { GitRunner } from './runner.ts'

export const ZERO_OID = '0000000000000000000000000000000000000000'
export const decoder = new TextDecoder()

/** Order of two strings by their UTF-8 bytes, as git sorts. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0
}

/** Number of leading characters `a` and `b` share. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a[i] === b[i]) i++
  return i
}

/** NUL-separated records (a trailing NUL ends the last). */
export function splitNul(bytes: Uint8Array): string[] {
  const parts = decoder.decode(bytes).split('\0')
  if (parts[parts.length - 1] === '') parts.pop()
  return parts
}

/** The environment that makes `s` the author and committer of a git command. */
export function who(s: GitSignature): Record<string, string> {
  const date = `@${s.timestamp} ${s.tz}`
  return {
    GIT_AUTHOR_NAME: s.name,
    GIT_AUTHOR_EMAIL: s.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: s.name,
    GIT_COMMITTER_EMAIL: s.email,
    GIT_COMMITTER_DATE: date,
  }
}

/** Bytes of working-tree file `path` (a symbolic link's target), or undefined when none. */
export async function workFile(root: string, path: string): Promise<Uint8Array | undefined> {
  const abs = nodePath.join(root, path)
  try {
    const s = await lstat(abs)
    if (s.isSymbolicLink()) return new TextEncoder().encode(await readlink(abs))
    if (!s.isFile()) return undefined
    return new Uint8Array(await readFile(abs))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw error
  }
}

/** The contents of blobs `oids`, by one `cat-file --batch`. */
export async function readBlobs(git: GitRunner, oids: string[]): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>()
  if (oids.length === 0) return out
  const bytes = await git.ok(['cat-file', '--batch'], { input: `${oids.join('\n')}\n` })
  let at = 0
  for (const oid of oids) {
    const newline = bytes.indexOf(10, at)
    const header = decoder.decode(bytes.subarray(at, newline)).split(' ')
    const size = Number(header[2])
    if (header[1] === 'missing' || !Number.isFinite(size))
      throw new IsoagentError('io', `git object ${oid} is missing`)
    out.set(oid, bytes.slice(newline + 1, newline + 1 + size))
    at = newline + 1 + size + 1
  }
  return out
}
