/** Replacement for every redacted secret. */
export const REDACTED = '[REDACTED]'

/**
 * Built-in credential patterns, redacted from every output, metadata value and event. What a
 * pattern's `keep` group matched stays (the name a secret is given); the rest is redacted.
 */
export const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b/g,
  // A group, not a lookbehind: a lookbehind is tried at every character of the text (10× slower).
  /(?<keep>\baws_?secret_?access_?key\b["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}\b/gi,
  /\bBearer\s+[A-Za-z0-9\-._~+/]{8,}=*/g,
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g,
]

const AWS_KEY_ID = /A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)/
// The pattern is case-insensitive; a flag on the hint would cost its fast literal search.
const SECRET = /[sS][eE][cC][rR][eE][tT]/

/** Whether `text` holds `literal` followed by one of `next` and then `last`. */
function holdsWith(text: string, literal: string, next: string, last: string): boolean {
  for (let at = text.indexOf(literal); at !== -1; at = text.indexOf(literal, at + 1)) {
    const after = at + literal.length
    if (next.includes(text[after] ?? '\0') && text[after + 1] === last) return true
  }
  return false
}

/**
 * For each of {@link CREDENTIAL_PATTERNS}, in the same order, a literal every match of it holds
 * (as a regular expression, for the combined scan below) and a test for it: text without one is
 * passed over by that plain search instead of the pattern's (much slower) scan. Where the hint
 * has a class, the test looks for its literal part with `indexOf` (several times as fast).
 */
const CREDENTIAL_HINTS: readonly { source: RegExp; holds: (text: string) => boolean }[] = [
  { source: /-----BEGIN /, holds: (t) => t.includes('-----BEGIN ') },
  { source: AWS_KEY_ID, holds: (t) => AWS_KEY_ID.test(t) },
  { source: SECRET, holds: (t) => SECRET.test(t) },
  { source: /Bearer/, holds: (t) => t.includes('Bearer') },
  { source: /sk-/, holds: (t) => t.includes('sk-') },
  { source: /gh[pousr]_/, holds: (t) => holdsWith(t, 'gh', 'pousr', '_') },
  { source: /xox[abposr]-/, holds: (t) => holdsWith(t, 'xox', 'abposr', '-') },
]
/** Matches wherever any of the hints does: most text needs this one scan only. */
const CREDENTIAL_HINT = new RegExp(CREDENTIAL_HINTS.map((h) => h.source.source).join('|'))

/** A match's replacement: its `keep` group, if any, then {@link REDACTED}. */
function redact(...args: unknown[]): string {
  const groups = args[args.length - 1]
  const keep =
    typeof groups === 'object' && groups !== null ? (groups as { keep?: string }).keep : undefined
  return (keep ?? '') + REDACTED
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Redacts host-supplied secrets and built-in credential patterns from strings and JSON values. */
export class Sanitizer {
  private readonly secrets: RegExp | undefined

  constructor(secrets: readonly string[] = []) {
    const literal = [...new Set(secrets.filter((s) => typeof s === 'string' && s.length > 0))]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
    this.secrets = literal.length > 0 ? new RegExp(literal.join('|'), 'g') : undefined
  }

  /** `text` with every secret replaced by {@link REDACTED}. */
  text(text: string): string {
    let out = text
    if (this.secrets !== undefined) {
      this.secrets.lastIndex = 0
      if (this.secrets.test(out)) {
        this.secrets.lastIndex = 0
        out = out.replace(this.secrets, redact)
      }
    }
    if (!CREDENTIAL_HINT.test(out)) return out
    for (const [k, pattern] of CREDENTIAL_PATTERNS.entries()) {
      if (!CREDENTIAL_HINTS[k]!.holds(out)) continue
      pattern.lastIndex = 0
      if (pattern.test(out)) {
        pattern.lastIndex = 0
        out = out.replace(pattern, redact)
      }
    }
    return out
  }

  /** A deep copy of a JSON-like value with every string (and key) sanitised. */
  value<T>(value: T, depth = 0): T {
    if (typeof value === 'string') return this.text(value) as T
    if (depth > 64 || value === null || typeof value !== 'object') return value
    if (Array.isArray(value)) return value.map((v) => this.value(v, depth + 1)) as T
    if (value instanceof Uint8Array) return value
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[this.text(k)] = this.value(v, depth + 1)
    return out as T
  }
}
