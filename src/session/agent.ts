import { Kernel } from '../kernel/kernel.ts'
import { builtinTools } from '../tools/builtin.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { Session } from './session.ts'

/** Options of {@link Agent.create}. */
export interface AgentOptions {
  /** The language model; needed only once an LLM feature is used. */
  model?: unknown
}

/** Options of {@link Agent.session}. */
export type SessionOptions = Record<string, never>

/** Creates sessions; holds what they share (the model). */
export class Agent {
  readonly options: AgentOptions

  private constructor(options: AgentOptions) {
    this.options = options
  }

  static create(options: AgentOptions = {}): Agent {
    return new Agent(options)
  }

  /** A session over `workspace`, offering exactly the tools its capabilities can serve. */
  async session(workspace: WorkspaceServices, _options: SessionOptions = {}): Promise<Session> {
    const tools = builtinTools.filter((tool) => tool.available(workspace.capabilities))
    return new Session(new Kernel(workspace, tools))
  }
}
