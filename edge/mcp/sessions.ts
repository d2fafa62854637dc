import {
  Agent,
  type Session,
  type SessionOptions,
  type WorkspaceServices,
} from '../../adapters/index.ts'

/**
 * Where the MCP endpoint gets its isoagent sessions: one per MCP session. An app that keeps its
 * own sessions (limits, idle sweeps, event history) implements this over its store.
 */
export interface McpSessions<C = unknown> {
  /**
   * Open the session of a new MCP session; `request` is its `initialize` request and `context`
   * what the caller passed to `handle` (e.g. the Hono context, whose `env` holds a Worker's
   * bindings). Throwing refuses the MCP session: a thrown `Response` is sent as is, anything
   * else becomes a `503` (with the message of an `IsoagentError`).
   */
  create(request: Request, context: C): Promise<Session>
  /** The MCP session ended (DELETE, idle or shutdown): release its session. */
  close(session: Session): Promise<void>
}

/** Options of {@link agentMcpSessions}. */
export interface AgentMcpSessionsOptions<C = unknown> {
  /** The workspace of a new session (called once per MCP session). */
  workspace: (request: Request, context: C) => WorkspaceServices | Promise<WorkspaceServices>
  /** Permissions, hooks, budget, ... of every session. */
  session?: SessionOptions
  /** Default `Agent.create()`. */
  agent?: Agent
}

/** {@link McpSessions} that open a fresh session of `agent` per MCP session and close it after. */
export function agentMcpSessions<C = unknown>(options: AgentMcpSessionsOptions<C>): McpSessions<C> {
  const agent = options.agent ?? Agent.create()
  return {
    async create(request, context) {
      return agent.session(await options.workspace(request, context), options.session ?? {})
    },
    close: (session) => session.close(),
  }
}
