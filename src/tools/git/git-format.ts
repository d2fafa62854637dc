import { structuredPatch } from 'diff'
import type {
  GitBranch,
  GitCommit,
  GitDiffFile,
  GitHead,
  GitRemote,
  GitSignature,
  GitStatusEntry,
  GitWorktree,
} from '../../workspace/git-backend.ts'
import { blobOid, isBinary } from './git-text.ts'

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** Abbreviated object id, as git prints it in small repositories. */
export const abbrev = (oid: string) => oid.slice(0, 7)

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
export function formatStatusHeader(head: GitHead): string {
  if (head.branch === null) return '## HEAD (no branch)'
  if (head.oid === null) return `## No commits yet on ${head.branch}`
  return `## ${head.branch}`
}

/** One `XY path` line of `git status --porcelain`. */
export const formatStatusEntry = (e: GitStatusEntry) => `${e.index}${e.worktree} ${e.path}`

/** One commit in `git log`'s default (medium) format, without decorations. */
export function formatCommit(c: GitCommit): string {
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
export const formatDetached = (oid: string) => `* (HEAD detached at ${abbrev(oid)})`

/** Lines of `git remote -v`. */
export const formatRemote = (r: GitRemote) => [
  `${r.name}\t${r.url} (fetch)`,
  `${r.name}\t${r.url} (push)`,
]

/** Lines of `git worktree list`. */
export function formatWorktrees(trees: GitWorktree[]): string[] {
  const width = Math.max(...trees.map((t) => t.path.length)) + 1
  return trees.map(
    (t) =>
      `${t.path.padEnd(width)} ${t.head === null ? '0000000' : abbrev(t.head)} ${t.branch === null ? '(detached HEAD)' : `[${t.branch}]`}`,
  )
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
export function formatDiffFile(file: GitDiffFile): { text: string; summary: DiffFileSummary } {
  const { path } = file
  if (file.unmerged === true || (file.old === null && file.new === null)) {
    return {
      text: `* Unmerged path ${path}\n`,
      summary: { path, status: 'unmerged', binary: false, additions: 0, deletions: 0 },
    }
  }
  const out = [`diff --git a/${path} b/${path}`]
  const oldOid = file.old === null ? '0000000' : abbrev(file.old.oid ?? blobOid(file.old.data))
  const newOid = file.new === null ? '0000000' : abbrev(file.new.oid ?? blobOid(file.new.data))
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
