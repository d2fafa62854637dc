import { parse as parseYaml } from 'yaml'
import { checkSkillName, SKILL_KINDS } from './check-skill.ts'
import { plainFrontMatter } from './plain-front-matter.ts'
import { SKILL_LIMITS, type Skill, type SkillKind } from './skill.ts'

// The checks without the YAML parser live in check-skill.ts (loaded with the session); this file
// and `yaml` load at the first skill file found.
export { checkInlineSkill, checkSkillName } from './check-skill.ts'

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n?---[ \t]*(?:\r?\n|$)/

/** A parsed skill file, or why it was skipped. */
export type ParsedSkill = { ok: true; skill: Skill; body: string } | { ok: false; message: string }

function stringList(value: unknown, field: string): string[] | string {
  if (value === undefined || value === null) return []
  if (typeof value === 'string') return [value]
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[]
  return `${field} must be a string or a list of strings`
}

/** Split the front matter off `text` and parse it; the rest is the body. */
function frontMatterOf(text: string): { data: unknown; body: string } | string {
  const m = FRONT_MATTER.exec(text)
  if (m === null) return 'no YAML front matter (the file must start with ---)'
  const block = m[1]!
  if (block.length > SKILL_LIMITS.maxFrontMatterChars)
    return `front matter is longer than ${SKILL_LIMITS.maxFrontMatterChars} characters`
  try {
    // Plain `key: value` lines (most skills) skip the YAML library; it reads anything else.
    const data: unknown =
      plainFrontMatter(block) ??
      parseYaml(block, { maxAliasCount: SKILL_LIMITS.maxAliasCount }) ??
      {}
    return { data, body: text.slice(m[0].length) }
  } catch (error) {
    return `front matter does not parse: ${(error as Error).message.split('\n')[0]}`
  }
}

/**
 * Parse a skill file's text. `folder` is the directory name for a `dir/SKILL.md` (the name must
 * be given and match it), undefined for a flat `x.md` (the name defaults to `x`).
 */
export function parseSkillText(text: string, fileStem: string, folder?: string): ParsedSkill {
  const split = frontMatterOf(text)
  if (typeof split === 'string') return { ok: false, message: split }
  const { data, body } = split
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return { ok: false, message: 'front matter is not a map' }
  const fm = data as Record<string, unknown>
  const name = fm.name ?? (folder === undefined ? fileStem : undefined)
  const nameError = checkSkillName(name)
  if (nameError !== undefined) return { ok: false, message: nameError }
  if (folder !== undefined && name !== folder)
    return {
      ok: false,
      message: `name ${JSON.stringify(name)} does not match its folder ${JSON.stringify(folder)}`,
    }
  const description = fm.description ?? ''
  if (typeof description !== 'string') return { ok: false, message: 'description must be a string' }
  if (description.length > SKILL_LIMITS.maxDescriptionChars)
    return {
      ok: false,
      message: `description is longer than ${SKILL_LIMITS.maxDescriptionChars} characters`,
    }
  const kind = fm.kind ?? 'instruction'
  if (!SKILL_KINDS.includes(kind as SkillKind))
    return { ok: false, message: `kind must be one of ${SKILL_KINDS.join(', ')}` }
  const tags = stringList(fm.tags, 'tags')
  if (typeof tags === 'string') return { ok: false, message: tags }
  const disable = fm['disable-model-invocation'] ?? false
  if (typeof disable !== 'boolean')
    return { ok: false, message: 'disable-model-invocation must be true or false' }
  const skill: Skill = {
    name: name as string,
    description,
    kind: kind as SkillKind,
    tags,
    disableModelInvocation: disable,
  }
  if (fm['allowed-tools'] !== undefined && fm['allowed-tools'] !== null) {
    const allowed = stringList(fm['allowed-tools'], 'allowed-tools')
    if (typeof allowed === 'string') return { ok: false, message: allowed }
    skill.allowedTools = allowed
  }
  for (const key of ['version', 'license', 'compatibility'] as const) {
    const value = fm[key]
    if (value === undefined || value === null) continue
    if (typeof value !== 'string' && typeof value !== 'number')
      return { ok: false, message: `${key} must be a string` }
    skill[key] = String(value)
  }
  if (typeof fm.metadata === 'object' && fm.metadata !== null && !Array.isArray(fm.metadata))
    skill.metadata = fm.metadata as Record<string, unknown>
  return { ok: true, skill, body }
}
