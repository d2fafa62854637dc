import type { Context } from 'hono'
import type { JsonSchema, ToolDefinition } from '../../adapters/index.ts'
import type { HostedSession } from './hosted-session.ts'
import type { SessionStore } from './session-store.ts'

/** A parameter of a route other than its path parameters (those come from the path). */
export interface RouteParameter {
  name: string
  in: 'query' | 'header'
  required: boolean
  description: string
  schema: JsonSchema
}

/** One documented response of a route. */
export interface RouteResponse {
  description: string
  /** Media type of the body (default `application/json` when `schema` is given). */
  contentType?: string
  schema?: JsonSchema
}

/**
 * One entry of the route table. The same table registers the routes on the Hono app and
 * generates the OpenAPI document, so the two cannot drift apart.
 */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'DELETE'
  /** Hono path syntax: `/v1/sessions/:id`. */
  path: string
  operationId: string
  summary: string
  description?: string
  /** Whether the bearer token is required (default true). */
  auth?: boolean
  /** Left out of the OpenAPI document (the landing page). */
  hidden?: boolean
  parameters?: RouteParameter[]
  requestBody?: { required: boolean; schema: JsonSchema }
  /**
   * For `/tools/:name`: the document also gets one operation per tool, with the body schema
   * this function builds around the tool's argument schema.
   */
  perTool?: (parameters: JsonSchema) => JsonSchema
  responses: Record<string, RouteResponse>
  handler: (c: Context) => Response | Promise<Response>
}

/** What routes see of the app: its store, its sessions and the tools they offer. */
export interface AppContext {
  readonly store: SessionStore
  /** Open a session over the workspace of this request (429 past the limit). */
  openSession(c: Context): Promise<HostedSession>
  /** The session named by the `:id` path parameter, or `ApiError` 404 `session_not_found`. */
  session(c: Context): HostedSession
  /** The definitions of the tools this app's sessions offer (for the OpenAPI document). */
  toolDefinitions(c: Context): Promise<ToolDefinition[]>
  /** The whole route table, once the app is built. */
  readonly routes: readonly RouteSpec[]
  /** The app's package version. */
  readonly version: string
  /** Static files served in place of the landing page (the web demo), when the app has them. */
  readonly assets?: (request: Request) => Response | undefined | Promise<Response | undefined>
}
