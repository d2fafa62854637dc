import type { Context } from 'hono'
import {
  IsoagentError,
  type Agent,
  type Session,
  type SessionOptions,
  type ToolDefinition,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { ApiError } from './api-error.ts'
import type { HostedSession } from './hosted-session.ts'
import type { AppContext, RouteSpec } from './route-spec.ts'
import type { SessionStore } from './session-store.ts'
import { VERSION } from '../version.ts'

/** What {@link appContext} builds the context from. */
export interface AppContextParts {
  /** The workspace of a new session, per request. */
  workspace: (c: Context) => WorkspaceServices | Promise<WorkspaceServices>
  /** Options of every session. */
  session: SessionOptions | undefined
  agent: Agent
  store: SessionStore
  /** The route table, filled once the app is built. */
  routes: readonly RouteSpec[]
  assets: AppContext['assets']
}

/**
 * The app's context: sessions opened over the request's workspace (an unopenable workspace is
 * 503 `workspace_unavailable`), looked up by `:id` (404 `session_not_found`), and the tool
 * definitions of the first session opened (one is opened and closed to learn them if none was).
 */
export function appContext(parts: AppContextParts): AppContext {
  const { store, agent } = parts
  let toolDefs: ToolDefinition[] | undefined

  const openCore = async (c: Context): Promise<Session> => {
    let workspace: WorkspaceServices
    try {
      workspace = await parts.workspace(c)
    } catch (error) {
      throw new ApiError(
        503,
        'workspace_unavailable',
        error instanceof IsoagentError ? error.message : 'the workspace could not be opened',
      )
    }
    let session: Session
    try {
      session = await agent.session(workspace, parts.session ?? {})
    } catch (error) {
      await workspace.close?.().catch(() => undefined)
      throw error
    }
    toolDefs ??= session.toolDefinitions()
    return session
  }

  return {
    store,
    routes: parts.routes,
    version: VERSION,
    openSession: (c) => store.create(() => openCore(c)),
    ...(parts.assets ? { assets: parts.assets } : {}),
    session(c): HostedSession {
      const hosted = store.get(c.req.param('id') ?? '')
      if (hosted === undefined)
        throw new ApiError(404, 'session_not_found', 'no such session (closed, idle or unknown)')
      return hosted
    },
    async toolDefinitions(c) {
      if (toolDefs === undefined) {
        const session = await openCore(c)
        await session.close()
      }
      return structuredClone(toolDefs!)
    },
  }
}
