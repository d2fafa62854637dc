import type { Skill } from './skill.ts'

/** A skill and its score for a query. */
export interface ScoredSkill {
  skill: Skill
  score: number
}

function tokens(query: string): string[] {
  return query
    .split(/\s+/)
    .map((t) => t.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter((t) => t.length >= 2)
}

/**
 * The reference's score, lower-cased: +100 when the query contains the name, +80 when it contains
 * a tag; per query token (length ≥ 2, ends trimmed of non-alphanumerics) +20 when the name holds
 * it, +15 a tag, +8 the description, +2 the body. A blank query scores 1 for every skill.
 */
export function scoreSkill(skill: Skill, query: string, body = ''): number {
  const q = query.toLowerCase().trim()
  if (q === '') return 1
  const name = skill.name.toLowerCase()
  const tags = (skill.tags ?? []).map((t) => t.toLowerCase())
  const description = skill.description.toLowerCase()
  const text = body.toLowerCase()
  let score = 0
  if (q.includes(name)) score += 100
  if (tags.some((t) => t !== '' && q.includes(t))) score += 80
  for (const token of tokens(q)) {
    if (name.includes(token)) score += 20
    if (tags.some((t) => t.includes(token))) score += 15
    if (description.includes(token)) score += 8
    if (text.includes(token)) score += 2
  }
  return score
}

/** Skills scoring above 0, by score (highest first) then name, at most `limit`. */
export function rankSkills(
  skills: readonly { skill: Skill; body?: string }[],
  query: string,
  limit: number,
): ScoredSkill[] {
  return skills
    .map(({ skill, body }) => ({ skill, score: scoreSkill(skill, query, body) }))
    .filter((s) => s.score > 0)
    .sort(
      (a, b) =>
        b.score - a.score ||
        (a.skill.name < b.skill.name ? -1 : a.skill.name > b.skill.name ? 1 : 0),
    )
    .slice(0, limit)
}

/** The catalog for the agent loop's system prompt: name and description per skill, bounded. */
export function skillCatalog(skills: readonly Skill[], maxChars: number): string {
  if (skills.length === 0) return ''
  const header = 'Skills you can use (call Skill with skill_name; search_skills finds more):\n'
  let text = header
  for (const skill of skills) {
    const line = `- ${skill.name}: ${skill.description.replace(/\s+/g, ' ')}\n`
    if (text.length + line.length > maxChars) {
      const more = `- … and ${skills.length - skills.indexOf(skill)} more (use search_skills)\n`
      if (text.length + more.length <= maxChars) text += more
      break
    }
    text += line
  }
  return text.trimEnd()
}
