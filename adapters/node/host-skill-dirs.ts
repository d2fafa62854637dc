import { existsSync } from 'node:fs'
import * as nodePath from 'node:path'
import { discoverSkills } from '../../src/skills/discover-skills.ts'
import type { SkillDiagnostic, SkillEntry, SkillsOptions } from '../../src/skills/skill.ts'
import { localWorkspace } from './local-workspace.ts'

/**
 * Host folders of skills (Node): `SessionOptions.skills.host` for folders outside the session's
 * workspace, e.g. `~/.agents/skills`. Each folder is read like a workspace skill folder (`x.md`
 * and `x/SKILL.md`, same rules and limits, a symlink out of the folder skipped); folders are taken
 * in order, a later duplicate name winning. A folder that does not exist is skipped silently; one
 * that cannot be read is a diagnostic. Listed skills have source `{ kind: 'host', path }` with the
 * file's absolute host path; bundled files are listed by absolute host path too.
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
      const absolute = (p: string) => nodePath.join(root, p)
      for (const d of found.diagnostics) diagnostics.push({ ...d, path: absolute(d.path) })
      for (const entry of found.entries)
        entries.push({
          ...entry,
          source: {
            kind: 'host',
            path: absolute(entry.source.kind === 'inline' ? '' : entry.source.path),
          },
          async loadBody() {
            const loaded = await entry.loadBody()
            return { body: loaded.body, files: loaded.files.map(absolute) }
          },
        })
    }
    return { entries, diagnostics }
  }
}
