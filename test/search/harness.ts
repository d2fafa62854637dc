import { spawnSync } from 'node:child_process'
import { expect } from 'vitest'
import type { Session, ToolResult } from '../../adapters/index.ts'

/** Where ripgrep lives (CI installs Debian's `ripgrep`). */
export const RG = process.env.RG_BINARY ?? '/usr/bin/rg'

/**
 * Run ripgrep in `cwd` with a clean environment: PATH only, and HOME an empty directory, so no
 * global gitignore (`core.excludesFile`, `~/.config/git/ignore`) and no RIPGREP_CONFIG_PATH can
 * change what it sees. Exit 1 (nothing found) is an empty answer; anything else fails the test.
 */
export function runRg(cwd: string, home: string, args: string[]): string {
  const r = spawnSync(RG, ['--no-config', '--color', 'never', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
    encoding: 'utf8',
    // With a readable stdin and no path, ripgrep would search stdin instead of the tree.
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
  })
  if (r.error) throw r.error
  if (r.status !== 0 && r.status !== 1)
    throw new Error(`rg ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  if (r.status === 1 && r.stdout !== '') throw new Error(`rg ${args.join(' ')}: ${r.stderr}`)
  return r.stdout
}

const stripCr = (s: string) => (s.endsWith('\r') ? s.slice(0, -1) : s)

/** Paths printed with `--null` (`-l`, `--files`): NUL-terminated. */
export function rgPaths(out: string): string[] {
  return out === '' ? [] : out.split('\0').slice(0, -1)
}

/** `-c --null` output: `path\0N\n` → `path:N`, our format (`--crlf` ends lines with `\r\n`). */
export function rgCounts(out: string): string[] {
  return out === ''
    ? []
    : out
        .slice(0, -1)
        .split('\n')
        .map((l) => stripCr(l).replace('\0', ':'))
}

/** One line of content output: a match (`path:n:text`) or a context line (`path-n-text`). */
export interface ContentLine {
  path: string
  line: number
  match: boolean
  text: string
}

/**
 * `-n --no-heading --null` output (optionally with context): `path\0n:text` or `path\0n-text`,
 * and `--` between groups (kept as `undefined`). ripgrep prints a CRLF line with its `\r`; our
 * tool strips a trailing `\r` for display, so it is stripped here too.
 */
export function rgContent(out: string): (ContentLine | undefined)[] {
  if (out === '') return []
  return out
    .slice(0, -1)
    .split('\n')
    .map((l) => {
      if (stripCr(l) === '--') return undefined
      const nul = l.indexOf('\0')
      const m = /^(\d+)([:-])/.exec(l.slice(nul + 1))
      if (nul < 0 || m === null) throw new Error(`unparsable rg line: ${JSON.stringify(l)}`)
      return {
        path: l.slice(0, nul),
        line: Number(m[1]),
        match: m[2] === ':',
        text: stripCr(l.slice(nul + 1 + m[0].length)),
      }
    })
}

/** Render content lines in our format, for readable diffs. */
export function renderContent(lines: readonly (ContentLine | undefined)[]): string[] {
  return lines.map((l) =>
    l === undefined
      ? '--'
      : `${l.path}${l.match ? ':' : '-'}${l.line}${l.match ? ':' : '-'}${l.text}`,
  )
}

/**
 * The whole output of a result: when projection cut it, the original is fetched back from the
 * artifact store through the evidence's `content_ref`.
 */
export async function fullOutput(session: Session, result: ToolResult): Promise<string> {
  const evidence = result.metadata?.a3s_tool_result_evidence as { content_ref?: string } | undefined
  const ref = evidence?.content_ref
  if (ref === undefined || ref.startsWith('inline:')) return result.output
  const bytes = await session.getArtifact(ref)
  if (bytes === undefined) throw new Error(`artifact ${ref} is missing`)
  return new TextDecoder().decode(bytes)
}

/** Arguments of one search call (without cursor). */
export type SearchArgs = Record<string, unknown>

/** One call of our tool; fails the test on a failed result. */
export async function search(session: Session, args: SearchArgs) {
  const result = await session.tool('search', args)
  expect(result.exitCode, `${JSON.stringify(args)}: ${result.output}`).toBe(0)
  const output = await fullOutput(session, result)
  const lines = output.split('\n')
  const meta = result.metadata as Record<string, unknown>
  const next = meta.next_cursor as string | null
  if (next !== null) {
    const last = lines.pop()!
    expect(last).toMatch(/^\.\.\. \(more (results|files); continue with cursor="[A-Za-z0-9_-]+"\)$/)
    expect(last).toContain(`cursor="${next}"`)
  }
  const empty = lines.length === 1 && /^\((no matches|no more matches|no files)\)$/.test(lines[0]!)
  return { lines: empty ? [] : lines, next, meta, result }
}

/** Every record of a query, following `next_cursor` with pages of `limit`. */
export async function searchAll(session: Session, args: SearchArgs, limit = 1000) {
  const pages: string[][] = []
  let cursor: string | undefined
  let meta: Record<string, unknown> | undefined
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await search(session, {
      ...args,
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    })
    meta ??= page.meta
    pages.push(page.lines)
    if (page.next === null) return { lines: pages.flat(), pages, firstMeta: meta }
    expect(page.lines.length, 'a page with a cursor is never empty').toBeGreaterThan(0)
    cursor = page.next
  }
  throw new Error('paging did not end')
}

/**
 * Parse our content output against the known set of paths (names may contain `-`, so a context
 * line `a-b-3-text` is only unambiguous given the paths).
 */
export function parseContent(
  lines: readonly string[],
  paths: readonly string[],
): (ContentLine | undefined)[] {
  const byLength = [...paths].sort((a, b) => b.length - a.length)
  return lines.map((l) => {
    if (l === '--') return undefined
    for (const path of byLength) {
      if (!l.startsWith(path)) continue
      const m = /^([:-])(\d+)([:-])/.exec(l.slice(path.length))
      if (m === null || m[1] !== m[3]) continue
      return {
        path,
        line: Number(m[2]),
        match: m[1] === ':',
        text: l.slice(path.length + m[0].length),
      }
    }
    throw new Error(`unparsable line: ${JSON.stringify(l.slice(0, 200))}`)
  })
}
