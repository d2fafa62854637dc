import ignore, { type Ignore } from 'ignore'
import type { WorkspacePath } from '../../workspace/workspace-path.ts'

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

/** Compile the text of an ignore file. */
export function compileIgnore(text: string): Ignore {
  return ignore({ allowRelativePaths: true }).add(text)
}

/**
 * Whether `path` (a file, or a directory when `isDir`) is ignored by the chain of levels from
 * the root down to its directory. Like ripgrep: for each kind of ignore file the deepest level
 * that matches (ignore or `!` whitelist) decides; `.rgignore` beats `.ignore` beats `.gitignore`
 * beats `.git/info/exclude`; gitignore rules above a nested repository's root do not apply.
 */
export function isIgnored(levels: readonly IgnoreLevel[], path: string, isDir: boolean): boolean {
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
      const r = matcher.test(probe)
      if (r.ignored) decided[k] = true
      else if (r.unignored) decided[k] = false
    }
    if (decided[3] === undefined && !sawGit && level.exclude !== undefined) {
      const r = level.exclude.test(probe)
      if (r.ignored) decided[3] = true
      else if (r.unignored) decided[3] = false
    }
    sawGit ||= level.hasGit
  }
  for (const d of decided) if (d !== undefined) return d
  return false
}
