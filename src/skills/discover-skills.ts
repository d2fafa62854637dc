import { IsoagentError } from '../errors.ts'
import { describeError } from '../kernel/error-kind.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'
import type { DirEntry, WorkspaceServices } from '../workspace/workspace-services.ts'
import { SKILL_LIMITS, type SkillDiagnostic, type SkillEntry } from './skill.ts'

/** What discovery found: entries in precedence order (a later duplicate name wins). */
export interface DiscoveredSkills {
  entries: SkillEntry[]
  diagnostics: SkillDiagnostic[]
}

interface Walk {
  workspace: WorkspaceServices
  signal?: AbortSignal | undefined
  found: DiscoveredSkills
  visited: number
}

const decoder = new TextDecoder('utf-8', { fatal: false })
/** Characters of a body kept for search scoring. */
export const BODY_HEAD_CHARS = 4096

async function listAll(walk: Walk, dir: WorkspacePath): Promise<DirEntry[]> {
  const entries: DirEntry[] = []
  let after: string | undefined
  do {
    const page = await walk.workspace.list(dir, {
      ...(after !== undefined ? { after } : {}),
      ...(walk.signal ? { signal: walk.signal } : {}),
    })
    entries.push(...page.entries)
    walk.visited += page.entries.length
    if (walk.visited > SKILL_LIMITS.maxEntries) throw new Error('too many entries')
    after = page.next
  } while (after !== undefined)
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** The files of a skill folder (for the body's listing), sorted, bounded. */
async function bundledFiles(workspace: WorkspaceServices, dir: WorkspacePath): Promise<string[]> {
  const files: string[] = []
  const walk: Walk = { workspace, found: { entries: [], diagnostics: [] }, visited: 0 }
  const visit = async (at: WorkspacePath, depth: number): Promise<void> => {
    if (depth > SKILL_LIMITS.maxDepth || files.length >= SKILL_LIMITS.maxBundledFiles) return
    for (const entry of await listAll(walk, at)) {
      const path = WorkspacePath.child(at, entry.name)
      if (entry.kind === 'directory') await visit(path, depth + 1)
      else if (entry.kind === 'file' && path !== WorkspacePath.child(dir, 'SKILL.md'))
        files.push(path)
      if (files.length >= SKILL_LIMITS.maxBundledFiles) return
    }
  }
  await visit(dir, 0)
  return files
}

/** Read a skill file's head (enough for any accepted front matter) and parse it. */
async function loadSkillFile(
  walk: Walk,
  path: WorkspacePath,
  folder: string | undefined,
): Promise<void> {
  const { workspace, found } = walk
  const stat = await workspace.stat(path)
  if (stat === undefined || stat.kind !== 'file') {
    found.diagnostics.push({ path, message: 'not a regular file inside the workspace' })
    return
  }
  if (stat.size > SKILL_LIMITS.maxFileBytes) {
    found.diagnostics.push({ path, message: `larger than ${SKILL_LIMITS.maxFileBytes} bytes` })
    return
  }
  const head = await workspace.read(path, {
    offset: 0,
    length: SKILL_LIMITS.maxFrontMatterChars + 4096,
  })
  const stem = WorkspacePath.basename(path).replace(/\.md$/i, '')
  // The front-matter parser (and `yaml`) loads at the first skill file found.
  const { parseSkillText } = await import('./parse-skill.ts')
  const parsed = parseSkillText(decoder.decode(head), stem, folder)
  if (!parsed.ok) {
    found.diagnostics.push({ path, message: parsed.message })
    return
  }
  const dir = folder === undefined ? undefined : WorkspacePath.parent(path)
  found.entries.push({
    skill: parsed.skill,
    source: { kind: 'workspace', path },
    bodyHead: parsed.body.slice(0, BODY_HEAD_CHARS),
    async loadBody() {
      const body = await currentBody(workspace, path, stem, folder, parsed.skill.name)
      return { body, files: dir === undefined ? [] : await bundledFiles(workspace, dir) }
    },
  })
}

/**
 * The body of skill `name` as its file reads now (it may have been edited since discovery): read
 * at most {@link SKILL_LIMITS.maxFileBytes} + 1 bytes. Throws `IsoagentError`: `not_found` (the
 * file is gone, from the workspace), `too_large` (it grew past the limit), `version_conflict`
 * (it no longer parses or now names another skill) — never a stale or cut body.
 */
async function currentBody(
  workspace: WorkspaceServices,
  path: WorkspacePath,
  stem: string,
  folder: string | undefined,
  name: string,
): Promise<string> {
  const max = SKILL_LIMITS.maxFileBytes
  const bytes = await workspace.read(path, { offset: 0, length: max + 1 })
  if (bytes.length > max)
    throw new IsoagentError('too_large', `${path} grew past ${max} bytes since it was discovered`)
  const { parseSkillText } = await import('./parse-skill.ts')
  const again = parseSkillText(decoder.decode(bytes), stem, folder)
  if (!again.ok)
    throw new IsoagentError(
      'version_conflict',
      `${path} changed since it was discovered and no longer parses: ${again.message}`,
      { data: { path } },
    )
  if (again.skill.name !== name)
    throw new IsoagentError(
      'version_conflict',
      `${path} changed since it was discovered: it now names skill ${JSON.stringify(again.skill.name)}`,
      { data: { path } },
    )
  return again.body
}

async function visitDir(walk: Walk, dir: WorkspacePath, depth: number): Promise<void> {
  if (depth > SKILL_LIMITS.maxDepth) {
    walk.found.diagnostics.push({
      path: dir,
      message: `deeper than ${SKILL_LIMITS.maxDepth} levels`,
    })
    return
  }
  const entries = await listAll(walk, dir)
  const skillFile = entries.find((e) => e.name === 'SKILL.md')
  if (skillFile !== undefined && depth > 0) {
    await loadOne(walk, WorkspacePath.child(dir, 'SKILL.md'), WorkspacePath.basename(dir))
    return // a skill folder: its other files are the skill's, not skills
  }
  for (const entry of entries) {
    if (walk.found.entries.length >= SKILL_LIMITS.maxSkills) {
      walk.found.diagnostics.push({
        path: dir,
        message: `more than ${SKILL_LIMITS.maxSkills} skills: the rest are skipped`,
      })
      return
    }
    const path = WorkspacePath.child(dir, entry.name)
    const kind = entry.kind === 'symlink' ? await statKind(walk, path) : entry.kind
    if (kind === 'directory') await visitDir(walk, path, depth + 1)
    else if (kind === 'file' && /\.md$/i.test(entry.name) && entry.name !== 'SKILL.md')
      await loadOne(walk, path, undefined)
    else if (kind === 'escape')
      walk.found.diagnostics.push({ path, message: 'a symlink out of the workspace: skipped' })
  }
}

async function statKind(walk: Walk, path: WorkspacePath): Promise<string> {
  try {
    return (await walk.workspace.stat(path))?.kind ?? 'escape'
  } catch {
    return 'escape'
  }
}

async function loadOne(walk: Walk, path: WorkspacePath, folder: string | undefined): Promise<void> {
  try {
    await loadSkillFile(walk, path, folder)
  } catch (error) {
    walk.found.diagnostics.push({ path, message: describeError(error) })
  }
}

/**
 * Find the skills of a workspace's skill folders, in folder order and sorted path order within
 * each: `x.md` and `x/SKILL.md`, recursively. Never throws: a file or folder that cannot be read
 * or parsed is a diagnostic.
 */
export async function discoverSkills(
  workspace: WorkspaceServices,
  dirs: readonly string[],
  signal?: AbortSignal,
): Promise<DiscoveredSkills> {
  const walk: Walk = { workspace, signal, found: { entries: [], diagnostics: [] }, visited: 0 }
  for (const raw of dirs) {
    let dir: WorkspacePath
    try {
      dir = WorkspacePath.parse(raw)
      const stat = await workspace.stat(dir)
      if (stat === undefined) continue
      if (stat.kind !== 'directory') {
        walk.found.diagnostics.push({ path: raw, message: 'not a directory' })
        continue
      }
      await visitDir(walk, dir, 0)
    } catch (error) {
      walk.found.diagnostics.push({ path: raw, message: describeError(error) })
    }
  }
  return walk.found
}
