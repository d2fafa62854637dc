import { SKILL_LIMITS, type Skill, type SkillKind } from './skill.ts'

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/** The kinds a skill may declare. */
export const SKILL_KINDS: readonly SkillKind[] = ['instruction', 'persona', 'tool']

/** Check a skill name: kebab-case, 1–64 characters. */
export function checkSkillName(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'name is required'
  if (name.length > SKILL_LIMITS.maxNameChars)
    return `name is longer than ${SKILL_LIMITS.maxNameChars} characters`
  if (!NAME.test(name)) return `name ${JSON.stringify(name)} is not kebab-case ([a-z0-9-])`
  return undefined
}

/** Check an inline skill given in code (the same rules as a file's front matter). */
export function checkInlineSkill(skill: unknown): string | undefined {
  if (typeof skill !== 'object' || skill === null) return 'a skill must be an object'
  const s = skill as Partial<Skill>
  const nameError = checkSkillName(s.name)
  if (nameError !== undefined) return nameError
  if (typeof s.description !== 'string' || s.description.length > SKILL_LIMITS.maxDescriptionChars)
    return `description must be a string of at most ${SKILL_LIMITS.maxDescriptionChars} characters`
  if (s.kind !== undefined && !SKILL_KINDS.includes(s.kind))
    return `kind must be one of ${SKILL_KINDS.join(', ')}`
  if (s.body !== undefined && typeof s.body !== 'string') return 'body must be a string'
  if (
    s.allowedTools !== undefined &&
    !(Array.isArray(s.allowedTools) && s.allowedTools.every((t) => typeof t === 'string'))
  )
    return 'allowedTools must be a list of strings'
  return undefined
}
