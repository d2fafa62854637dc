import ignore, { type Ignore } from 'ignore'
import type { WorkspacePath } from '../../../workspace/workspace-path.ts'

/** Ignore files read in every directory, highest precedence first (ripgrep's order). */
export const IGNORE_FILES = ['.rgignore', '.ignore', '.gitignore'] as const

/** The ignore rules one directory contributes. */
export interface IgnoreLevel {
  /** Directory the rules are relative to. */
  base: WorkspacePath
  /** One matcher per {@link IGNORE_FILES} entry (undefined when that file is absent). */
  matchers: (Ignore | undefined)[]
  /** `.git/info/exclude` of a repository rooted here. */
  exclude?: Ignore
  /** A `.git` directory is here: `.gitignore` rules from above it do not apply below. */
  hasGit: boolean
}

/**
 * Compile the text of an ignore file. Case-sensitive, like git's default on Linux and like
 * ripgrep (which has no case-folding for ignore files unless asked): `*.bak` leaves `X.BAK`.
 */
export function compileIgnore(text: string): Ignore {
  return ignore({ allowRelativePaths: true, ignoreCase: false }).add(text)
}

/** The result of the rules of one ignore file for one path. */
interface RuleResult {
  ignored: boolean
  unignored: boolean
}

/** `ignore`'s rule list: it matches one path against the rules, last rule wins. */
interface RuleList {
  test(path: string, mode: 'regex'): RuleResult
}

/**
 * Match `probe` against the rules of one ignore file, and nothing else. `Ignore.test` also
 * reports a path as ignored when one of its parent directories is (git's "a file under an
 * excluded directory cannot be re-included"). ripgrep matches every path on its own: its walk
 * never enters an ignored directory, so the only parents the walk passes through that one file's
 * rules exclude are directories a stronger file re-included (a deeper `!logs/`, a `.ignore`
 * `!logs/` over a `.gitignore` `logs/`), and their entries are judged by their own paths.
 * `ignore` (pinned) keeps that per-path match on its rule list; if a future version moved it,
 * the parent-aware public test is the fallback (and the ripgrep differential suite fails).
 */
function matchOwn(matcher: Ignore, probe: string): RuleResult {
  const rules = (matcher as unknown as { _rules?: Partial<RuleList> })._rules
  return typeof rules?.test === 'function'
    ? (rules as RuleList).test(probe, 'regex')
    : matcher.test(probe)
}

/** What the ignore files say about a path: ignored, re-included (`!`), or nothing applies. */
export type IgnoreDecision = 'ignore' | 'whitelist' | undefined

/**
 * Decide `path` (a file, or a directory when `isDir`) by the chain of levels from the root down
 * to its directory. Like ripgrep: for each kind of ignore file the deepest level that matches
 * (ignore or `!` whitelist) decides; `.rgignore` beats `.ignore` beats `.gitignore` beats
 * `.git/info/exclude`; gitignore rules above a nested repository's root do not apply.
 */
export function ignoreDecision(
  levels: readonly IgnoreLevel[],
  path: string,
  isDir: boolean,
): IgnoreDecision {
  const decided: (boolean | undefined)[] = [undefined, undefined, undefined, undefined]
  let sawGit = false
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]!
    const rel = level.base === '' ? path : path.slice(level.base.length + 1)
    const probe = isDir ? `${rel}/` : rel
    for (let k = 0; k < IGNORE_FILES.length; k++) {
      if (decided[k] !== undefined) continue
      if (k === 2 && sawGit) continue
      const matcher = level.matchers[k]
      if (matcher === undefined) continue
      const r = matchOwn(matcher, probe)
      if (r.ignored) decided[k] = true
      else if (r.unignored) decided[k] = false
    }
    if (decided[3] === undefined && !sawGit && level.exclude !== undefined) {
      const r = matchOwn(level.exclude, probe)
      if (r.ignored) decided[3] = true
      else if (r.unignored) decided[3] = false
    }
    sawGit ||= level.hasGit
  }
  for (const d of decided) if (d !== undefined) return d ? 'ignore' : 'whitelist'
  return undefined
}
