import type { Kernel } from '../kernel/kernel.ts'
import type { LanguageModel } from '../llm/language-model.ts'
import { skillCatalog } from './search-skills.ts'
import { SKILL_LIMITS } from './skill.ts'
import { readSkillFile, SKILL_FILE_SCHEME } from './skill-files.ts'
import type { SkillRegistry } from './skill-registry.ts'
import { createSearchSkillsTool, createSkillTool, type SkillHost } from './skill-tools.ts'

/**
 * Wire a registry into a session's kernel: `search_skills` and `Skill` are offered exactly while
 * at least one discoverable skill exists (re-checked after every add or remove); `read` opens
 * host skills' bundled files by their `skill://<name>/<file>` paths.
 */
export function attachSkills(
  kernel: Kernel,
  registry: SkillRegistry,
  model: LanguageModel | undefined,
): void {
  const host: SkillHost = {
    registry,
    model,
    tools: () => kernel.list(),
    emit: (event) => {
      if (kernel.events.hasSubscribers)
        kernel.events.emit({ ...event, timestamp: Date.now() } as never)
    },
  }
  const search = createSearchSkillsTool(host)
  const skill = createSkillTool(host)
  const sync = () => {
    if (registry.discoverable().length > 0) {
      if (kernel.tool('search_skills') === undefined) kernel.addTool(search)
      if (kernel.tool('Skill') === undefined) kernel.addTool(skill)
    } else {
      kernel.removeTool('search_skills')
      kernel.removeTool('Skill')
    }
  }
  registry.onChange(sync)
  sync()
  kernel.mount(SKILL_FILE_SCHEME, { read: (uri) => readSkillFile(registry, uri) })
}

/**
 * The agent loop's system prompt: the persona's body in place of the role section when one is
 * named, then the catalog of discoverable skills (names and descriptions, ≤ 8,000 characters).
 */
export function skillSystemPrompt(
  registry: SkillRegistry,
  role: string | undefined,
  persona: { body: string } | undefined,
): () => string | undefined {
  return () => {
    const catalog = skillCatalog(
      registry.discoverable().map((e) => e.skill),
      SKILL_LIMITS.maxCatalogChars,
    )
    const parts = [persona?.body.trim() ?? role, catalog].filter(
      (p): p is string => p !== undefined && p !== '',
    )
    return parts.length === 0 ? undefined : parts.join('\n\n')
  }
}
