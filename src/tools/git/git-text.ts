import { sha1 } from '@noble/hashes/legacy.js'

const encoder = new TextEncoder()

/** Order of two strings by their UTF-8 bytes, as git sorts paths and ref names. */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0
  const x = encoder.encode(a)
  const y = encoder.encode(b)
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

/** Whether `path` is `prefix` or below it ('' covers every path). */
export function inPrefix(path: string, prefix: string): boolean {
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`)
}

/** `+0200` for isomorphic-git's (and `Date#getTimezoneOffset`'s) -120. */
export function tzOfOffset(minutes: number): string {
  const sign = minutes > 0 ? '-' : '+'
  const abs = Math.abs(minutes)
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`
}

/** -120 for `+0200` (the inverse of {@link tzOfOffset}). */
export function offsetOfTz(tz: string): number {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(tz)
  if (m === null) return 0
  const minutes = Number(m[2]) * 60 + Number(m[3])
  // Never -0: isomorphic-git would write a UTC zone as `-0000`.
  return m[1] === '-' ? minutes : minutes === 0 ? 0 : -minutes
}

/** The blob id git gives `data`. */
export function blobOid(data: Uint8Array): string {
  const header = encoder.encode(`blob ${data.length}\0`)
  const all = new Uint8Array(header.length + data.length)
  all.set(header)
  all.set(data, header.length)
  return Array.from(sha1(all), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** Git's binary test: a NUL byte in the first 8000 bytes. */
export function isBinary(data: Uint8Array): boolean {
  const n = Math.min(data.length, 8000)
  for (let i = 0; i < n; i++) if (data[i] === 0) return true
  return false
}

/**
 * Whether `name` is a branch name git accepts (`git check-ref-format --branch`): no control
 * characters, spaces, `~^:?*[\`, `..`, `@{`, no leading `-` or `/`, no trailing `/`, `.` or
 * `.lock`, no empty or dot-leading components, and not `HEAD` or `@`.
 */
export function isValidBranchName(name: string): boolean {
  if (name.length === 0 || name.length > 255 || name === 'HEAD' || name === '@') return false
  if (name.startsWith('-') || name.startsWith('/') || name.endsWith('/')) return false
  if (name.endsWith('.') || name.endsWith('.lock') || name.includes('..') || name.includes('@{'))
    return false
  for (const ch of name) {
    const code = ch.codePointAt(0)!
    if (code <= 0x20 || code === 0x7f || '~^:?*[\\'.includes(ch)) return false
  }
  return name.split('/').every((part) => part.length > 0 && !part.startsWith('.'))
}
