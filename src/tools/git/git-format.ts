import { structuredPatch } from 'diff'
import type {
  GitBranch,
  GitCommit,
  GitDiffFile,
  GitHead,
  GitRemote,
  GitSignature,
  GitStatusEntry,
  GitUpstream,
  GitWorktree,
} from '../../workspace/git-backend.ts'
import { blobOid, isBinary } from './git-text.ts'

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** An object id as git prints it abbreviated (`GitBackend.abbreviate`). */
export type Abbrev = (oid: string) => string

/** The all-zero object id (a side of a diff that does not exist, an unborn HEAD). */
export const ZERO_OID = '0000000000000000000000000000000000000000'

/** First line of a commit message. */
export const subjectOf = (message: string) => message.split('\n')[0] ?? ''

/** git's default date format in the signature's own zone: `Thu Apr 7 15:13:13 2005 -0700`. */
export function formatDate(s: GitSignature): string {
  const m = /^([+-])(\d\d)(\d\d)$/.exec(s.tz)
  const offset = m === null ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]))
  const d = new Date((s.timestamp + offset * 60) * 1000)
  const two = (n: number) => String(n).padStart(2, '0')
  return (
    `${WEEKDAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ` +
    `${d.getUTCFullYear()} ${s.tz}`
  )
}

/** The `## ...` line of `git status --porcelain --branch`. */
export function formatStatusHeader(head: GitHead, upstream: GitUpstream | null): string {
  if (head.branch === null)
    return `## ${head.oid === null ? 'No commits yet on ' : ''}HEAD (no branch)`
  const branch = `## ${head.oid === null ? 'No commits yet on ' : ''}${head.branch}`
  if (upstream === null) return branch
  const line = `${branch}...${upstream.name}`
  if (upstream.gone) return `${line} [gone]`
  const ahead = upstream.ahead ?? 0
  const behind = upstream.behind ?? 0
  if (ahead === 0 && behind === 0) return line
  if (ahead === 0) return `${line} [behind ${behind}]`
  if (behind === 0) return `${line} [ahead ${ahead}]`
  return `${line} [ahead ${ahead}, behind ${behind}]`
}

/** One `XY path` line of `git status --porcelain`. */
export const formatStatusEntry = (e: GitStatusEntry) => `${e.index}${e.worktree} ${e.path}`

/** One commit in `git log`'s default (medium) format, without decorations. */
export function formatCommit(c: GitCommit, abbrev: Abbrev): string {
  const lines = [`commit ${c.oid}`]
  if (c.parents.length > 1) lines.push(`Merge: ${c.parents.map(abbrev).join(' ')}`)
  lines.push(`Author: ${c.author.name} <${c.author.email}>`)
  lines.push(`Date:   ${formatDate(c.author)}`)
  lines.push('')
  for (const line of c.message.split('\n')) lines.push(`    ${line}`)
  return lines.join('\n')
}

/** One line of `git branch`. */
export function formatBranch(b: GitBranch, head: GitHead): string {
  return `${head.branch === b.name ? '*' : ' '} ${b.name}`
}

/** The `git branch` line for a detached HEAD. */
export const formatDetached = (short: string) => `* (HEAD detached at ${short})`

/** Lines of `git remote -v`. */
export const formatRemote = (r: GitRemote) => [
  `${r.name}\t${r.url} (fetch)`,
  `${r.name}\t${r.url} (push)`,
]

/** Lines of `git worktree list`. */
export function formatWorktrees(trees: GitWorktree[], abbrev: Abbrev): string[] {
  const width = Math.max(...trees.map((t) => t.path.length)) + 1
  const heads = trees.map((t) => abbrev(t.head ?? ZERO_OID))
  const headWidth = Math.max(...heads.map((h) => h.length))
  return trees.map(
    (t, i) =>
      `${t.path.padEnd(width)} ${heads[i]!.padEnd(headWidth)} ${t.branch === null ? '(detached HEAD)' : `[${t.branch}]`}`,
  )
}

/** Every object id the `index` lines of a diff of `files` show (blob ids, the all-zero id). */
export function diffOids(files: GitDiffFile[]): string[] {
  const out: string[] = []
  for (const file of files) {
    if (file.unmerged === true || (file.old === null && file.new === null)) continue
    for (const side of [file.old, file.new])
      out.push(side === null ? ZERO_OID : (side.oid ?? blobOid(side.data)))
  }
  return out
}

/** Facts about one file of a diff, for metadata. */
export interface DiffFileSummary {
  path: string
  status: 'added' | 'deleted' | 'modified' | 'unmerged'
  binary: boolean
  additions: number
  deletions: number
}

/**
 * git's default function-name rule for hunk headers: the nearest line above the hunk that starts
 * with a letter, `_` or `$`, cut to 80 bytes and stripped of trailing white space.
 */
function functionContext(lines: string[], before: number): string {
  for (let i = Math.min(before, lines.length) - 1; i >= 0; i--) {
    const line = lines[i]!
    if (/^[A-Za-z_$]/.test(line)) {
      const bytes = new TextEncoder().encode(line)
      let cut = line
      if (bytes.length > 80)
        cut = new TextDecoder().decode(bytes.subarray(0, 80)).replace(/\uFFFD$/, '')
      return cut.replace(/\s+$/, '')
    }
  }
  return ''
}

const range = (start: number, count: number) => {
  const at = count === 0 ? start - 1 : start
  return count === 1 ? `${at}` : `${at},${count}`
}

const decoder = new TextDecoder()

/** One file of `git diff` as text, with its summary. */
export function formatDiffFile(
  file: GitDiffFile,
  abbrev: Abbrev,
): { text: string; summary: DiffFileSummary } {
  const { path } = file
  if (file.unmerged === true || (file.old === null && file.new === null)) {
    return {
      text: `* Unmerged path ${path}\n`,
      summary: { path, status: 'unmerged', binary: false, additions: 0, deletions: 0 },
    }
  }
  const out = [`diff --git a/${path} b/${path}`]
  const oldOid = abbrev(file.old === null ? ZERO_OID : (file.old.oid ?? blobOid(file.old.data)))
  const newOid = abbrev(file.new === null ? ZERO_OID : (file.new.oid ?? blobOid(file.new.data)))
  if (file.old === null) out.push(`new file mode ${file.new!.mode}`)
  else if (file.new === null) out.push(`deleted file mode ${file.old.mode}`)
  else if (file.old.mode !== file.new.mode)
    out.push(`old mode ${file.old.mode}`, `new mode ${file.new.mode}`)
  const sameMode = file.old !== null && file.new !== null && file.old.mode === file.new.mode
  out.push(`index ${oldOid}..${newOid}${sameMode ? ` ${file.new!.mode}` : ''}`)
  const status = file.old === null ? 'added' : file.new === null ? 'deleted' : 'modified'
  const oldData = file.old?.data ?? new Uint8Array()
  const newData = file.new?.data ?? new Uint8Array()
  const aName = file.old === null ? '/dev/null' : `a/${path}`
  const bName = file.new === null ? '/dev/null' : `b/${path}`
  if (isBinary(oldData) || isBinary(newData)) {
    out.push(`Binary files ${aName} and ${bName} differ`)
    return {
      text: `${out.join('\n')}\n`,
      summary: { path, status, binary: true, additions: 0, deletions: 0 },
    }
  }
  const oldText = decoder.decode(oldData)
  const newText = decoder.decode(newData)
  let additions = 0
  let deletions = 0
  if (oldText !== newText) {
    out.push(`--- ${aName}`, `+++ ${bName}`)
    const oldLines = oldText.split('\n')
    const patch = structuredPatch(aName, bName, oldText, newText, '', '', { context: 3 })
    for (const hunk of patch.hunks) {
      const fn = functionContext(oldLines, hunk.oldStart - 1)
      out.push(
        `@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@${fn === '' ? '' : ` ${fn}`}`,
      )
      for (const line of hunk.lines) {
        if (line.startsWith('+')) additions++
        else if (line.startsWith('-')) deletions++
        out.push(line)
      }
    }
  }
  return {
    text: `${out.join('\n')}\n`,
    summary: { path, status, binary: false, additions, deletions },
  }
}
