/** The JavaScript runtime this code runs in, by feature detection (no `node:*` import). */
export function runtimeName(): string {
  const g = globalThis as {
    navigator?: { userAgent?: string }
    process?: { versions?: { node?: string; bun?: string } }
    Deno?: unknown
  }
  const ua = g.navigator?.userAgent ?? ''
  if (ua === 'Cloudflare-Workers') return 'workerd'
  if (g.Deno !== undefined) return 'deno'
  if (g.process?.versions?.bun !== undefined) return 'bun'
  if (g.process?.versions?.node !== undefined) return 'node'
  return ua === '' ? 'unknown' : 'browser'
}
