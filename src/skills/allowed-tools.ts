import { PermissionPolicy } from '../kernel/permissions.ts'

/** One `allowed-tools` entry: a tool name (ours, lower-case) and an optional pattern. */
export interface AllowedToolEntry {
  tool: string
  pattern?: string
}

// Claude Code's tool names mapped to this runtime's; any other name is lower-cased.
const ALIASES: Record<string, string> = {
  grep: 'search',
  glob: 'search',
  multiedit: 'edit',
  webfetch: 'web_fetch',
  websearch: 'web_search',
  task: 'task',
}

/** Split `text` on `separator` where it is outside parentheses. */
function splitTopLevel(text: string, separator: RegExp): string[] {
  const parts: string[] = []
  let depth = 0
  let current = ''
  for (const ch of text) {
    if (ch === '(') depth++
    else if (ch === ')') depth = Math.max(0, depth - 1)
    if (depth === 0 && separator.test(ch)) {
      parts.push(current)
      current = ''
    } else current += ch
  }
  parts.push(current)
  return parts.map((p) => p.trim()).filter((p) => p !== '')
}

/**
 * The entries of `allowed-tools`: a list (one entry each), or a string that is comma-separated,
 * one `Tool(pattern)` whose pattern may hold spaces, or (legacy) space-separated.
 */
export function splitAllowedTools(values: readonly string[]): string[] {
  const entries: string[] = []
  for (const value of values) {
    const text = value.trim()
    if (text === '') continue
    if (splitTopLevel(text, /,/).length > 1 || text.includes(','))
      entries.push(...splitTopLevel(text, /,/))
    else if (/^[A-Za-z_*][\w-]*\(.*\)$/s.test(text)) entries.push(text)
    else entries.push(...splitTopLevel(text, /\s/))
  }
  return entries
}

/** Parse one entry: `Tool`, `Tool(pattern)` (Claude's `prefix:*` is the glob `prefix*`) or `*`. */
export function parseAllowedTool(entry: string): AllowedToolEntry | undefined {
  const m = /^([A-Za-z_*][\w-]*)(?:\((.*)\))?$/s.exec(entry.trim())
  if (m === null) return undefined
  const raw = m[1]!
  const tool =
    raw === '*'
      ? '*'
      : (ALIASES[raw.toLowerCase()] ?? (raw.startsWith('mcp__') ? raw : raw.toLowerCase()))
  const pattern = m[2]?.trim()
  if (pattern === undefined || pattern === '' || pattern === '*') return { tool }
  return { tool, pattern: pattern.replace(/:\*$/, '*') }
}

/**
 * What a skill's child run may call: `none` without `allowed-tools`, `all` for `*`, else the
 * named tools, each call checked against its entries' patterns. The parent's own rules still
 * apply on top (the child's calls go through the parent's kernel): a skill only narrows.
 */
export class SkillToolScope {
  private readonly policy: PermissionPolicy | undefined
  private readonly names: ReadonlySet<string> | 'all'
  /** Entries that did not parse (reported, never widening). */
  readonly ignored: string[] = []

  constructor(allowedTools: readonly string[] | undefined) {
    if (allowedTools === undefined) {
      this.names = new Set()
      this.policy = undefined
      return
    }
    const entries: AllowedToolEntry[] = []
    for (const text of splitAllowedTools(allowedTools)) {
      const entry = parseAllowedTool(text)
      if (entry === undefined) this.ignored.push(text)
      else entries.push(entry)
    }
    if (entries.some((e) => e.tool === '*' && e.pattern === undefined)) {
      this.names = 'all'
      this.policy = undefined
      return
    }
    this.names = new Set(entries.map((e) => e.tool))
    const allow = entries
      .filter((e) => e.tool !== '*')
      .map((e) => (e.pattern === undefined ? e.tool : `${e.tool}(${e.pattern})`))
    let policy: PermissionPolicy | undefined
    try {
      policy = new PermissionPolicy({ allow, defaultDecision: 'deny' })
    } catch {
      // A pattern that is not a valid glob allows nothing (never more than asked for).
      policy = new PermissionPolicy({ defaultDecision: 'deny' })
    }
    this.policy = policy
  }

  /** Whether the child may see `tool` at all. */
  offers(tool: string): boolean {
    return this.names === 'all' || this.names.has(tool)
  }

  /** Whether the child may make this call (name and pattern). */
  permits(tool: string, args: unknown): boolean {
    if (this.names === 'all') return true
    if (!this.names.has(tool) || this.policy === undefined) return false
    return this.policy.decide(tool, args).decision === 'allow'
  }

  /** The scope as metadata shows it. */
  describe(): string[] | 'all' | 'none' {
    if (this.names === 'all') return 'all'
    return this.names.size === 0 ? 'none' : [...this.names]
  }
}
