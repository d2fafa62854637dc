import { runAgentLoop } from '../agent/agent-loop.ts'
import { describeError, errorKindOf } from '../kernel/error-kind.ts'
import { eventArgs } from '../kernel/kernel.ts'
import { READ_ONLY, type JsonSchema, type ToolContext, type ToolSpec } from '../kernel/tool-spec.ts'
import type { LanguageModel, ModelUsage } from '../llm/language-model.ts'
import { toolFailure, toolSuccess, type ToolResult } from '../tool-result.ts'
import { SkillToolScope, splitAllowedTools } from './allowed-tools.ts'
import { rankSkills } from './search-skills.ts'
import { SKILL_LIMITS, type Skill, type SkillEntry } from './skill.ts'
import type { SkillRegistry } from './skill-registry.ts'

/** What the two skill tools need of their session. */
export interface SkillHost {
  registry: SkillRegistry
  /** The session's model, when its agent has one (the Skill tool then runs a child agent). */
  model?: LanguageModel | undefined
  /** The session's listed tools. */
  tools(): readonly ToolSpec<Record<string, unknown>>[]
  /** Session events of a skill's use. */
  emit(event: {
    type: 'skill_started' | 'skill_finished' | 'skill_loaded'
    skill: string
    [k: string]: unknown
  }): void
}

/** `search_skills` arguments after their aliases are resolved. */
export interface SearchSkillsArgs {
  query: string
  limit?: number
}

/** `Skill` arguments after their aliases are resolved. */
export interface SkillArgs {
  skill_name: string
  prompt?: string
}

const SEARCH_PARAMETERS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: {
      type: 'string',
      description: 'What you need a skill for (words of its name, tags or purpose).',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: SKILL_LIMITS.searchMaxLimit,
      description: 'Most skills to list (1-20, default 5).',
    },
  },
}

const SKILL_PARAMETERS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['skill_name'],
  properties: {
    skill_name: { type: 'string', description: 'The skill to run, as search_skills lists it.' },
    prompt: {
      type: 'string',
      description: 'What to do with it (default: run the skill as written).',
    },
  },
}

function objectOf(args: unknown): Record<string, unknown> | undefined {
  if (typeof args === 'object' && args !== null && !Array.isArray(args))
    return args as Record<string, unknown>
  return undefined
}

/** Resolve `search_skills`' aliases (a bare string, `q`); a message when invalid. */
export function searchArgsOf(args: unknown): SearchSkillsArgs | string {
  if (typeof args === 'string') return { query: args }
  const o = objectOf(args)
  if (o === undefined) return 'arguments must be an object with query'
  const unknown = Object.keys(o).filter((k) => !['query', 'q', 'limit'].includes(k))
  if (unknown.length > 0) return `unknown field ${unknown[0]}`
  const query = o.query ?? o.q
  if (typeof query !== 'string') return 'query is required (a string)'
  if (o.limit === undefined) return { query }
  if (typeof o.limit !== 'number' || !Number.isInteger(o.limit)) return 'limit must be an integer'
  return { query, limit: Math.min(SKILL_LIMITS.searchMaxLimit, Math.max(1, o.limit)) }
}

/** Resolve `Skill`'s aliases (`skillName`, `name`, `query`, a bare string). */
export function skillArgsOf(args: unknown): SkillArgs | string {
  if (typeof args === 'string') return { skill_name: args }
  const o = objectOf(args)
  if (o === undefined) return 'arguments must be an object with skill_name'
  const unknown = Object.keys(o).filter(
    (k) => !['skill_name', 'skillName', 'name', 'prompt', 'query'].includes(k),
  )
  if (unknown.length > 0) return `unknown field ${unknown[0]}`
  const name = o.skill_name ?? o.skillName ?? o.name
  if (typeof name !== 'string' || name === '') return 'skill_name is required (a string)'
  const prompt = o.prompt ?? o.query
  if (prompt !== undefined && typeof prompt !== 'string') return 'prompt must be a string'
  return prompt === undefined ? { skill_name: name } : { skill_name: name, prompt }
}

function describeSkill(skill: Skill): string {
  const allowed = skill.allowedTools?.length ? skill.allowedTools.join(', ') : 'not specified'
  return `- ${skill.name} (${skill.kind ?? 'instruction'}): ${skill.description} Allowed tools: ${allowed}.`
}

/** The `search_skills` tool over a session's registry. */
export function createSearchSkillsTool(host: SkillHost): ToolSpec<Record<string, unknown>> {
  return {
    name: 'search_skills',
    description:
      'Find skills (packaged instructions for a kind of task) by what you need. Lists each match with its kind, description and allowed tools; then run one with Skill.',
    parameters: SEARCH_PARAMETERS,
    available: () => true,
    scheduling: READ_ONLY,
    primaryArgument: 'query',
    validate(args) {
      const parsed = searchArgsOf(args)
      return typeof parsed === 'string' ? parsed : undefined
    },
    async run(args) {
      const { query, limit } = searchArgsOf(args) as SearchSkillsArgs
      const pool = host.registry
        .discoverable()
        .map((e) => ({ skill: e.skill, body: e.bodyHead ?? '' }))
      const ranked = rankSkills(pool, query, limit ?? SKILL_LIMITS.searchDefaultLimit)
      const skills = ranked.map(({ skill }) => ({
        name: skill.name,
        description: skill.description,
        kind: skill.kind ?? 'instruction',
        tags: skill.tags ?? [],
        allowed_tools:
          skill.allowedTools === undefined ? null : splitAllowedTools(skill.allowedTools),
      }))
      if (ranked.length === 0)
        return toolSuccess(
          'search_skills',
          'No matching skills found. Continue with the core tools.',
          { skills },
        )
      const lines = [
        `Found ${ranked.length} matching skill(s). Invoke one with Skill using its skill_name.`,
        ...ranked.map(({ skill }) => describeSkill(skill)),
      ]
      return toolSuccess('search_skills', lines.join('\n'), { skills })
    },
  }
}

/** The role a skill's child run gets. */
export function skillRole(skill: Skill, body: string): string {
  return `You are executing the '${skill.name}' skill.\n\n${skill.description}\n\n${body}`
}

async function runChild(
  host: SkillHost & { model: LanguageModel },
  entry: SkillEntry,
  body: string,
  args: SkillArgs,
  context: ToolContext,
): Promise<ToolResult> {
  const { skill } = entry
  const scope = new SkillToolScope(skill.allowedTools)
  const tools = host.tools().filter((t) => t.name !== 'Skill' && scope.offers(t.name))
  const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 }
  const changed = new Set<string>()
  let toolCalls = 0
  const run = await runAgentLoop({
    model: host.model,
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: structuredClone(t.parameters),
    })),
    allowed: new Set(tools.map((t) => t.name)),
    invoke: async (name, callArgs, o) => {
      if (!scope.permits(name, callArgs))
        return toolFailure(
          name,
          `the '${skill.name}' skill's allowed-tools do not permit this call`,
          {
            type: 'permission_denied',
            message: `outside allowed-tools of skill ${skill.name}`,
          },
        )
      const result = await context.invoke(name, callArgs, { signal: o.signal })
      const paths = result.metadata?.changed_paths
      if (Array.isArray(paths)) for (const p of paths) if (typeof p === 'string') changed.add(p)
      const written = (callArgs as { file_path?: unknown } | null)?.file_path
      if (
        result.exitCode === 0 &&
        ['write', 'edit', 'patch'].includes(name) &&
        typeof written === 'string'
      )
        changed.add(written)
      return result
    },
    scheduling: (name) => context.scheduling(name),
    eventArgs: (name, callArgs) => {
      const tool = tools.find((t) => t.name === name)
      return tool === undefined ? callArgs : eventArgs(tool, callArgs)
    },
    messages: [{ role: 'user', content: args.prompt ?? `Execute the '${skill.name}' skill` }],
    system: skillRole(skill, body),
    maxSteps: 20,
    signal: context.signal,
    emit: (event) => {
      if (event.type !== 'tool_call') return
      toolCalls++
      context.emitOutput(`[${skill.name}] ${event.toolName}\n`)
    },
  })
  usage.inputTokens = run.usage.inputTokens
  usage.outputTokens = run.usage.outputTokens
  return toolSuccess('Skill', run.text, {
    skill_name: skill.name,
    tool_calls: toolCalls,
    usage,
    changed_paths: [...changed].sort(),
    allowed_tools: scope.describe(),
  })
}

/** The `Skill` tool: a child agent run with the skill as its role, or (no model) its body. */
export function createSkillTool(host: SkillHost): ToolSpec<Record<string, unknown>> {
  return {
    name: 'Skill',
    description:
      "Run a skill by name (see search_skills). With a model, a sub-agent follows the skill's instructions with only the tools the skill allows, and its final answer is returned; otherwise the skill's instructions and bundled files are returned for you to follow.",
    parameters: SKILL_PARAMETERS,
    available: () => true,
    scheduling: { ...READ_ONLY, read_only: false, idempotent: false, max_parallelism: 4 },
    primaryArgument: 'skill_name',
    validate(args) {
      const parsed = skillArgsOf(args)
      return typeof parsed === 'string' ? parsed : undefined
    },
    async run(rawArgs, context) {
      const args = skillArgsOf(rawArgs) as SkillArgs
      const entry = host.registry.get(args.skill_name)
      if (entry === undefined)
        return toolFailure('Skill', `Skill '${args.skill_name}' not found`, { type: 'not_found' })
      const { skill } = entry
      if (skill.disableModelInvocation)
        return toolFailure(
          'Skill',
          `Skill '${skill.name}' disables model invocation and cannot be invoked via the Skill tool`,
          { type: 'permission_denied', message: 'disable-model-invocation' },
        )
      let loaded: { body: string; files: string[] }
      try {
        loaded = await entry.loadBody()
      } catch (error) {
        return toolFailure(
          'Skill',
          `Skill '${skill.name}' could not be loaded: ${describeError(error)}`,
          errorKindOf(error, 'Skill'),
        )
      }
      host.emit({ type: 'skill_loaded', skill: skill.name })
      const model = host.model
      if (model === undefined) {
        const files =
          loaded.files.length > 0
            ? `\n\nBundled files (read them when the instructions say so):\n${loaded.files.map((f) => `- ${f}`).join('\n')}`
            : ''
        return toolSuccess('Skill', `# Skill: ${skill.name}\n\n${loaded.body.trim()}${files}`, {
          skill_name: skill.name,
          tool_calls: 0,
          files: loaded.files,
          mode: 'instructions',
        })
      }
      host.emit({ type: 'skill_started', skill: skill.name })
      try {
        const result = await runChild({ ...host, model }, entry, loaded.body, args, context)
        host.emit({ type: 'skill_finished', skill: skill.name, exitCode: 0 })
        return result
      } catch (error) {
        host.emit({ type: 'skill_finished', skill: skill.name, exitCode: 1 })
        return toolFailure(
          'Skill',
          `Skill '${skill.name}' failed: ${describeError(error)}`,
          errorKindOf(error, 'Skill'),
          {
            skill_name: skill.name,
          },
        )
      }
    },
  }
}
