import type { ToolSpec } from '../../kernel/tool-spec.ts'

/** The agent profiles a task can run as. */
export type TaskAgent = 'explore' | 'verification' | 'general'

/** Every profile, in the order the schema lists them. */
export const TASK_AGENTS: readonly TaskAgent[] = ['explore', 'verification', 'general']

/** Tools no sub-agent gets: sub-agents do not spawn sub-agents. */
const NEVER = new Set(['task', 'parallel_task'])
/** Tools only a `general` sub-agent gets besides what its scheduling says. */
const GENERAL_ONLY = new Set(['generate_object'])

const SYSTEM: Record<TaskAgent, string> = {
  explore:
    'You are a focused sub-agent exploring a workspace with read-only tools. Investigate what the ' +
    'task asks, then answer with a concise, factual report (paths, line numbers, findings). You ' +
    'cannot change files.',
  verification:
    'You are a focused sub-agent verifying work in a workspace. Read the relevant files and run ' +
    'the checks the task names where tools allow; answer with what passed, what failed and the ' +
    'evidence. Do not change files.',
  general:
    'You are a focused sub-agent working in a workspace. Do what the task asks with the tools ' +
    'you have, then answer with a concise report of what you did and found.',
}

/**
 * Which tools a profile may call: `explore` the read-only ones (read, ls, search and read-only
 * custom tools), `verification` those plus `bash` and `git` (to run checks), `general` every
 * tool of the session; none gets `task`.
 */
export function profileAllows(agent: TaskAgent, tool: ToolSpec<Record<string, unknown>>): boolean {
  if (NEVER.has(tool.name)) return false
  if (GENERAL_ONLY.has(tool.name)) return agent === 'general'
  const readOnly = tool.scheduling.read_only && tool.scheduling.idempotent
  switch (agent) {
    case 'explore':
      return readOnly
    case 'verification':
      return readOnly || tool.name === 'bash' || tool.name === 'git'
    case 'general':
      return true
  }
}

/** The system prompt of a profile's sub-agent for one task. */
export function profileSystem(agent: TaskAgent, description: string): string {
  return `${SYSTEM[agent]}\n\nTask: ${description}`
}
