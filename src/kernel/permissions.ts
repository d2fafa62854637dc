import picomatch from 'picomatch'
import { IsoagentError } from '../errors.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'

/**
 * Permission rules: each `tool`, `tool(glob)` or `*`; a tool name ending in `*` names every tool
 * it starts (`mcp__github__*`). deny wins over ask, ask over allow.
 */
export interface PermissionRules {
  allow?: string[]
  ask?: string[]
  deny?: string[]
  /** Decision when no rule matches (default `allow`). */
  defaultDecision?: PermissionDecision
}

/** What a permission check decides. */
export type PermissionDecision = 'allow' | 'ask' | 'deny'

/** The decision and the rule that made it (undefined for the default). */
export interface PermissionVerdict {
  decision: PermissionDecision
  rule?: string
}

interface CompiledRule {
  source: string
  tool: string
  match?: (value: string, isPath: boolean) => boolean
}

const RULE = /^(\*|[A-Za-z_][A-Za-z0-9_-]*\*?)(?:\((.+)\))?$/s
const PATH_ARGS = ['file_path', 'path'] as const
const TEXT_ARGS = ['command', 'url'] as const

function compile(source: unknown, list: string): CompiledRule {
  if (typeof source !== 'string')
    throw new IsoagentError(
      'invalid_argument',
      `permissions.${list}: rules are strings, got ${JSON.stringify(source)}`,
    )
  const m = RULE.exec(source.trim())
  if (m === null) {
    throw new IsoagentError(
      'invalid_argument',
      `permissions.${list}: rule ${JSON.stringify(source)} does not parse; use "tool" or "tool(glob)"`,
    )
  }
  const tool = m[1]!
  const glob = m[2]
  if (glob === undefined) return { source, tool }
  if (glob.trim() === '')
    throw new IsoagentError(
      'invalid_argument',
      `permissions.${list}: rule ${JSON.stringify(source)} has an empty glob`,
    )
  let pathMatcher: (value: string) => boolean
  let textMatcher: (value: string) => boolean
  try {
    pathMatcher = picomatch(glob, { dot: true })
    textMatcher = picomatch(glob, { dot: true, bash: true })
  } catch (cause) {
    throw new IsoagentError(
      'invalid_argument',
      `permissions.${list}: glob in ${JSON.stringify(source)} is invalid`,
      { cause },
    )
  }
  return {
    source,
    tool,
    match: (value, isPath) => (isPath ? pathMatcher(value) : textMatcher(value)),
  }
}

/** The values a rule's glob is matched against: path arguments (normalised) and command/url. */
export function primaryValues(args: unknown): { value: string; isPath: boolean }[] {
  if (typeof args !== 'object' || args === null) return []
  const record = args as Record<string, unknown>
  const values: { value: string; isPath: boolean }[] = []
  const addPath = (raw: unknown) => {
    if (typeof raw !== 'string') return
    let value = raw
    try {
      value = WorkspacePath.parse(raw) || '.'
    } catch {
      // Unparseable paths are refused later by the path gate; match the raw text meanwhile.
    }
    values.push({ value, isPath: true })
  }
  for (const key of PATH_ARGS) addPath(record[key])
  if (Array.isArray(record.files))
    for (const f of record.files) addPath((f as Record<string, unknown> | null)?.path)
  for (const key of TEXT_ARGS)
    if (typeof record[key] === 'string')
      values.push({ value: record[key] as string, isPath: false })
  return values
}

/** Whether a rule's tool part (`*`, a name, or a name prefix ending in `*`) names `tool`. */
function namesTool(ruleTool: string, tool: string): boolean {
  if (ruleTool.endsWith('*')) return tool.startsWith(ruleTool.slice(0, -1))
  return ruleTool === tool
}

const STRICTNESS: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 }

/** Compiled permission rules. Construction refuses rules that do not parse. */
export class PermissionPolicy {
  private readonly rules: Record<PermissionDecision, CompiledRule[]>
  private readonly fallback: PermissionDecision
  private defaultAsk: ((tool: string) => string | undefined) | undefined

  constructor(rules: PermissionRules = {}) {
    if (typeof rules !== 'object' || rules === null)
      throw new IsoagentError('invalid_argument', 'permissions must be an object')
    for (const key of Object.keys(rules)) {
      if (!['allow', 'ask', 'deny', 'defaultDecision'].includes(key)) {
        throw new IsoagentError('invalid_argument', `permissions: unknown field "${key}"`)
      }
    }
    const list = (name: PermissionDecision) => {
      const value = rules[name] ?? []
      if (!Array.isArray(value))
        throw new IsoagentError('invalid_argument', `permissions.${name} must be an array of rules`)
      return value.map((r) => compile(r, name))
    }
    this.rules = { deny: list('deny'), ask: list('ask'), allow: list('allow') }
    const fallback = rules.defaultDecision ?? 'allow'
    if (!['allow', 'ask', 'deny'].includes(fallback)) {
      throw new IsoagentError(
        'invalid_argument',
        `permissions.defaultDecision must be allow, ask or deny`,
      )
    }
    this.fallback = fallback
  }

  /**
   * Decide a call of `tool` with `args`. Each primary value (a path, a command, a URL) is decided
   * on its own — the first deny, else ask, else allow rule that matches it, else the default —
   * and the call gets the strictest of those decisions: an allow rule for one path of a `files`
   * batch does not let the batch's other paths through.
   */
  decide(tool: string, args: unknown): PermissionVerdict {
    const verdict = this.decideByRules(tool, args)
    if (verdict.rule !== undefined || verdict.decision !== 'allow' || this.defaultAsk === undefined)
      return verdict
    const reason = this.defaultAsk(tool)
    return reason === undefined ? verdict : { decision: 'ask', rule: reason }
  }

  /**
   * Make calls of the tools `ask` names wait for approval when no rule decides them: the default
   * decision `allow` becomes `ask`, with `ask`'s answer as the reason (a `deny` default or any
   * rule that matches still wins). For tools whose own description asks for care (MCP tools
   * without read-only annotations).
   */
  setDefaultAsk(ask: (tool: string) => string | undefined): void {
    this.defaultAsk = ask
  }

  private decideByRules(tool: string, args: unknown): PermissionVerdict {
    const values = primaryValues(args)
    if (values.length === 0) return this.decideValue(tool, undefined)
    let verdict: PermissionVerdict | undefined
    for (const value of values) {
      const one = this.decideValue(tool, value)
      if (verdict === undefined || STRICTNESS[one.decision] > STRICTNESS[verdict.decision])
        verdict = one
      if (one.decision === 'deny') break
    }
    return verdict!
  }

  private decideValue(
    tool: string,
    value: { value: string; isPath: boolean } | undefined,
  ): PermissionVerdict {
    for (const decision of ['deny', 'ask', 'allow'] as const) {
      for (const rule of this.rules[decision]) {
        if (!namesTool(rule.tool, tool)) continue
        if (rule.match === undefined || (value && rule.match(value.value, value.isPath))) {
          return { decision, rule: rule.source }
        }
      }
    }
    return { decision: this.fallback }
  }
}
