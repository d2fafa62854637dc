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

/**
 * What may stand between two lines of a multi-line secret in an output: the line break and a
 * line-number prefix (`read`'s `%6d\t`, `cat -n`, `grep -n`'s `12:`), so numbering the lines
 * does not break the literal.
 */
const SECRET_LINE_BREAK = String.raw`\r?\n(?:[ \t]{0,8}\d{1,12}(?:\t|: ?|\| ?))?`
/** Longest line-number prefix {@link SECRET_LINE_BREAK} lets through, in characters. */
const LINE_PREFIX_CHARS = 24

/** Depth past which {@link Sanitizer.value} cuts a value instead of copying it. */
export const MAX_SANITIZE_DEPTH = 64
/** What stands for a value nested deeper than {@link MAX_SANITIZE_DEPTH}. */
export const CUT_DEEP_VALUE = `[cut: nested deeper than ${MAX_SANITIZE_DEPTH} levels]`

/** The pattern of one host secret: its lines, with {@link SECRET_LINE_BREAK} between them. */
function secretSource(secret: string): string {
  return secret.split(/\r?\n/).map(escapeRegExp).join(SECRET_LINE_BREAK)
}

/** Where a secret or a credential pattern matched: `[start, end)`. */
export interface SecretSpan {
  start: number
  end: number
}

/** Redacts host-supplied secrets and built-in credential patterns from strings and JSON values. */
export class Sanitizer {
  private secrets: RegExp | undefined
  private singleLine: readonly string[] = []
  /** Longest multi-line secret's length − 1, plus room for line-number prefixes (or 0). */
  private multiLineHold = 0
  private known: readonly string[] = []

  constructor(secrets: readonly string[] = []) {
    this.add(secrets)
  }

  /**
   * Redact `secrets` too from now on (e.g. the credentials of an MCP server added to a running
   * session). Empty strings and secrets already known are ignored.
   */
  add(secrets: readonly string[]): void {
    const unique = [
      ...new Set([...this.known, ...secrets.filter((s) => typeof s === 'string' && s.length > 0)]),
    ].sort((a, b) => b.length - a.length)
    if (unique.length === this.known.length) return
    this.known = unique
    this.secrets = new RegExp(unique.map(secretSource).join('|'), 'g')
    this.singleLine = unique.filter((s) => !s.includes('\n'))
    this.multiLineHold = Math.max(
      0,
      ...unique
        .filter((s) => s.includes('\n'))
        .map((s) => s.length - 1 + (s.split('\n').length - 1) * LINE_PREFIX_CHARS),
    )
  }

  /** The host secrets redacted (longest first). */
  list(): readonly string[] {
    return this.known
  }

  /**
   * How many characters at the end of `text` a stream must hold back so that no host secret is
   * cut in two: the longest suffix that begins a one-line secret; for a multi-line secret (whose
   * lines may come numbered) the whole length of the longest one − 1.
   */
  heldTail(text: string): number {
    let best = Math.min(this.multiLineHold, text.length)
    for (const secret of this.singleLine) {
      for (let n = Math.min(secret.length - 1, text.length); n > best; n--) {
        if (text.endsWith(secret.slice(0, n))) {
          best = n
          break
        }
      }
    }
    return best
  }

  /** Where in `text` a host secret or a credential pattern matches (possibly overlapping). */
  spans(text: string): SecretSpan[] {
    const found: SecretSpan[] = []
    const collect = (pattern: RegExp) => {
      pattern.lastIndex = 0
      for (const m of text.matchAll(pattern))
        found.push({ start: m.index, end: m.index + m[0].length })
    }
    if (this.secrets !== undefined) collect(this.secrets)
    if (!CREDENTIAL_HINT.test(text)) return found
    for (const [k, pattern] of CREDENTIAL_PATTERNS.entries())
      if (CREDENTIAL_HINTS[k]!.holds(text)) collect(pattern)
    return found
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

  /**
   * A deep copy of a JSON-like value with every string (and key) sanitised. An object or array
   * nested deeper than {@link MAX_SANITIZE_DEPTH} levels is cut (replaced by
   * {@link CUT_DEEP_VALUE}): nothing below it is passed on unsanitised.
   */
  value<T>(value: T, depth = 0): T {
    if (typeof value === 'string') return this.text(value) as T
    if (value === null || typeof value !== 'object') return value
    if (depth > MAX_SANITIZE_DEPTH) return CUT_DEEP_VALUE as T
    if (Array.isArray(value)) return value.map((v) => this.value(v, depth + 1)) as T
    if (value instanceof Uint8Array) return value
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[this.text(k)] = this.value(v, depth + 1)
    return out as T
  }
}
