import { existsSync } from 'node:fs'
import * as nodePath from 'node:path'
import { discoverSkills } from '../../src/skills/discover-skills.ts'
import type { SkillDiagnostic, SkillEntry, SkillsOptions } from '../../src/skills/skill.ts'
import { readFolderFile, skillFileUri } from '../../src/skills/skill-files.ts'
import type { WorkspaceServices } from '../../src/workspace/workspace-services.ts'
import { localWorkspace } from './local-workspace.ts'

/**
 * Host folders of skills (Node): `SessionOptions.skills.host` for folders outside the session's
 * workspace, e.g. `~/.agents/skills`. Each folder is read like a workspace skill folder (`x.md`
 * and `x/SKILL.md`, same rules and limits, a symlink out of the folder skipped); folders are taken
 * in order, a later duplicate name winning. A folder that does not exist is skipped silently; one
 * that cannot be read is a diagnostic. Listed skills have source `{ kind: 'host', path }` with the
 * file's absolute host path. The `read` tool cannot open host paths, so a `dir/SKILL.md` skill's
 * bundled files are listed as `skill://<name>/<file>`, which `read` opens read-only through the
 * entry's `readFile`: contained in that skill's own folder (a `../` or a symlink out of it is
 * refused `path_escape`), at most `SKILL_LIMITS.maxBundledFileBytes` (`too_large` past it).
 */
export function hostSkillDirs(...dirs: string[]): NonNullable<SkillsOptions['host']> {
  return async () => {
    const entries: SkillEntry[] = []
    const diagnostics: SkillDiagnostic[] = []
    for (const dir of dirs) {
      const root = nodePath.resolve(dir)
      if (!existsSync(root)) continue
      let found: Awaited<ReturnType<typeof discoverSkills>>
      try {
        found = await discoverSkills(localWorkspace(root), [''])
      } catch (error) {
        diagnostics.push({ path: root, message: (error as Error).message })
        continue
      }
      for (const d of found.diagnostics)
        diagnostics.push({ ...d, path: nodePath.join(root, d.path) })
      for (const entry of found.entries) entries.push(hostEntry(root, entry))
    }
    return { entries, diagnostics }
  }
}

/**
 * A skill found under the host folder `root` as the session lists it: source by absolute host
 * path; for a `dir/SKILL.md` skill, bundled files as `skill://` URIs read from `dir` only.
 */
function hostEntry(root: string, entry: SkillEntry): SkillEntry {
  const path = entry.source.kind === 'inline' ? '' : entry.source.path
  const host: SkillEntry = { ...entry, source: { kind: 'host', path: nodePath.join(root, path) } }
  // `x.md` skills have no folder of their own, hence no files.
  if (nodePath.posix.basename(path) !== 'SKILL.md') return host
  const folder = nodePath.posix.dirname(path)
  const name = entry.skill.name
  const prefix = folder === '.' ? '' : `${folder}/`
  let workspace: WorkspaceServices | undefined
  return {
    ...host,
    async loadBody() {
      const loaded = await entry.loadBody()
      const files = loaded.files
        .filter((f) => f.startsWith(prefix))
        .map((f) => skillFileUri(name, f.slice(prefix.length)))
      return { body: loaded.body, files }
    },
    async readFile(relative, maxBytes) {
      // Rooted at the skill's own folder: the workspace refuses what leaves it (`..`, symlinks).
      workspace ??= localWorkspace(nodePath.join(root, folder))
      return readFolderFile(workspace, relative, maxBytes, skillFileUri(name, relative))
    },
  }
}
