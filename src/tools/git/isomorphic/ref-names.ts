/** git's ref lookup rules (`ref_rev_parse_rules`), most literal first. */
export const REF_RULES: ((name: string) => string)[] = [
  (n) => n,
  (n) => `refs/${n}`,
  (n) => `refs/tags/${n}`,
  (n) => `refs/heads/${n}`,
  (n) => `refs/remotes/${n}`,
  (n) => `refs/remotes/${n}/HEAD`,
]

/** A ref name that stays inside the git directory (no `..`, no absolute or odd components). */
export function isSafeRefName(name: string): boolean {
  if (name.length === 0 || name.startsWith('/') || name.endsWith('/')) return false
  if (/[\0-\x20\x7f~^:?*[\\]/.test(name) || name.includes('@{')) return false
  return name.split('/').every((part) => part.length > 0 && !part.startsWith('.'))
}

/**
 * The remote-tracking ref the fetch `specs` map the remote ref `merge` to (git's
 * `remote_find_tracking`), or undefined. Negative refspecs that match exclude it.
 */
export function trackingRef(specs: string[], merge: string): string | undefined {
  const glob = (pattern: string, name: string): string | undefined => {
    const star = pattern.indexOf('*')
    if (star < 0) return pattern === name ? '' : undefined
    const head = pattern.slice(0, star)
    const tail = pattern.slice(star + 1)
    if (name.length < head.length + tail.length) return undefined
    if (!name.startsWith(head) || !name.endsWith(tail)) return undefined
    return name.slice(head.length, name.length - tail.length)
  }
  for (const spec of specs)
    if (spec.startsWith('^') && glob(spec.slice(1), merge) !== undefined) return undefined
  for (const raw of specs) {
    if (raw.startsWith('^')) continue
    const spec = raw.startsWith('+') ? raw.slice(1) : raw
    const colon = spec.indexOf(':')
    if (colon < 0) continue
    const src = spec.slice(0, colon)
    const dst = spec.slice(colon + 1)
    if (dst === '') continue
    const middle = glob(src, merge)
    if (middle === undefined) continue
    return src.includes('*') ? dst.replace('*', middle) : dst
  }
  return undefined
}

/**
 * git's `shorten_unambiguous_ref(ref, 0)`: the shortest name a rule maps back to `ref` that no
 * earlier (more literal) rule resolves to an existing ref.
 */
export async function shortenRef(
  ref: string,
  exists: (name: string) => Promise<boolean>,
): Promise<string> {
  const prefixes = ['', 'refs/', 'refs/tags/', 'refs/heads/', 'refs/remotes/']
  for (let i = prefixes.length - 1; i > 0; i--) {
    const prefix = prefixes[i]!
    if (!ref.startsWith(prefix) || ref.length === prefix.length) continue
    const short = ref.slice(prefix.length)
    let ambiguous = false
    for (let j = 0; j < i && !ambiguous; j++) ambiguous = await exists(REF_RULES[j]!(short))
    if (!ambiguous) return short
  }
  return ref
}
