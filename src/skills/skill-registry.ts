import { IsoagentError } from '../errors.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { discoverSkills } from './discover-skills.ts'
import { checkInlineSkill } from './check-skill.ts'
import {
  DEFAULT_SKILL_DIRS,
  SKILL_LIMITS,
  type Skill,
  type SkillDiagnostic,
  type SkillEntry,
  type SkillsOptions,
  type SkillsReport,
} from './skill.ts'

function inlineEntry(skill: Skill): SkillEntry {
  const copy = structuredClone(skill)
  return {
    skill: copy,
    source: { kind: 'inline' },
    bodyHead: (copy.body ?? '').slice(0, 4096),
    loadBody: async () => ({ body: copy.body ?? '', files: [] }),
  }
}

/**
 * A session's skills: discovered once when the session opens (workspace folders, then host
 * folders, then inline skills; a later duplicate name wins), plus live ones added later, which
 * shadow a skill of the same name until removed.
 */
export class SkillRegistry {
  private readonly base = new Map<string, SkillEntry>()
  private readonly live = new Map<string, SkillEntry>()
  private readonly hidden = new Set<string>()
  readonly diagnostics: SkillDiagnostic[] = []
  private readonly listeners = new Set<() => void>()

  /** Load the skills `options` names from `workspace`; never throws for a bad file. */
  static async load(
    workspace: WorkspaceServices,
    options: SkillsOptions = {},
  ): Promise<SkillRegistry> {
    const registry = new SkillRegistry()
    const found = await discoverSkills(workspace, options.dirs ?? DEFAULT_SKILL_DIRS)
    registry.diagnostics.push(...found.diagnostics)
    const entries = [...found.entries]
    if (options.host !== undefined) {
      try {
        const host = await options.host()
        entries.push(...host.entries)
        registry.diagnostics.push(...host.diagnostics)
      } catch (error) {
        registry.diagnostics.push({ path: '(host folders)', message: (error as Error).message })
      }
    }
    const inline = options.inline ?? []
    if (inline.length > SKILL_LIMITS.maxSkills)
      throw new IsoagentError(
        'invalid_argument',
        `skills.inline: ${inline.length} skills, more than ${SKILL_LIMITS.maxSkills}`,
      )
    for (const skill of inline) {
      const problem = checkInlineSkill(skill)
      if (problem !== undefined)
        throw new IsoagentError('invalid_argument', `skills.inline: ${problem}`)
      entries.push(inlineEntry(skill))
    }
    for (const entry of entries) registry.base.set(entry.skill.name, entry)
    return registry
  }

  /**
   * Called after every add or remove (the session re-registers the two tools; the MCP server
   * tells its client the resource list changed). Returns the function that unsubscribes.
   */
  onChange(listener: () => void): () => void {
    const own = () => listener()
    this.listeners.add(own)
    return () => void this.listeners.delete(own)
  }

  /** Every visible skill, sorted by name. */
  all(): SkillEntry[] {
    const names = new Set([...this.base.keys(), ...this.live.keys()])
    return [...names]
      .filter((n) => !this.hidden.has(n) || this.live.has(n))
      .sort()
      .map((n) => (this.live.get(n) ?? this.base.get(n))!)
  }

  get(name: string): SkillEntry | undefined {
    const live = this.live.get(name)
    if (live !== undefined) return live
    return this.hidden.has(name) ? undefined : this.base.get(name)
  }

  /** Skills the model can find and invoke (not disabled, not personas). */
  discoverable(): SkillEntry[] {
    return this.all().filter(
      (e) => !e.skill.disableModelInvocation && (e.skill.kind ?? 'instruction') !== 'persona',
    )
  }

  /** Add a live skill (shadowing one of the same name). Throws `invalid_argument` for a bad one. */
  add(skill: Skill): void {
    const problem = checkInlineSkill(skill)
    if (problem !== undefined) throw new IsoagentError('invalid_argument', `addSkill: ${problem}`)
    if (!this.live.has(skill.name) && this.live.size >= SKILL_LIMITS.maxSkills)
      throw new IsoagentError(
        'invalid_argument',
        `addSkill: more than ${SKILL_LIMITS.maxSkills} added skills; remove one first`,
      )
    this.live.set(skill.name, inlineEntry(skill))
    this.changed()
  }

  /** Remove a live skill (restoring what it shadowed), else hide a discovered one. */
  remove(name: string): boolean {
    if (this.live.delete(name)) {
      this.changed()
      return true
    }
    if (this.base.has(name) && !this.hidden.has(name)) {
      this.hidden.add(name)
      this.changed()
      return true
    }
    return false
  }

  report(): SkillsReport {
    return {
      skills: this.all().map(({ skill, source }) => ({
        name: skill.name,
        description: skill.description,
        kind: skill.kind ?? 'instruction',
        tags: skill.tags ?? [],
        allowed_tools: skill.allowedTools ?? null,
        disable_model_invocation: skill.disableModelInvocation ?? false,
        source,
      })),
      diagnostics: [...this.diagnostics],
    }
  }

  private changed(): void {
    for (const listener of this.listeners) listener()
  }
}
