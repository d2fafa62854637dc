import type { Context } from 'hono'
import { IsoagentError, type BackgroundTaskInfo } from '../../adapters/index.ts'
import { ApiError } from './api-error.ts'
import { isPlainObject, onlyFields, readJsonObject } from './body.ts'
import { eventStream } from './event-stream.ts'
import { messageStream } from './message-stream.ts'
import type { HostedSession } from './hosted-session.ts'
import { buildOpenApi } from './openapi.ts'
import type { AppContext, RouteResponse, RouteSpec } from './route-spec.ts'
import { runtimeName } from './runtime.ts'
import { schemaRef } from './schemas.ts'
import { withSession } from './with-session.ts'

const json = (schema: string, description: string): RouteResponse => ({
  description,
  schema: schemaRef(schema),
})
const failure = (description: string): RouteResponse => json('Error', description)
const noContent: RouteResponse = { description: 'done, no body' }

const SESSION_ERRORS = {
  '401': failure('missing or wrong bearer token'),
  '404': failure('no such session (`session_not_found`)'),
}
const BODY_ERRORS = {
  '400': failure('malformed JSON, or a body that is not an object of the fields named'),
  '413': failure('body over the size limit'),
}

function parseLastEventId(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined
  if (!/^\d{1,15}$/.test(value.trim()))
    throw new ApiError(
      400,
      'invalid_argument',
      'Last-Event-ID must be an event id (a whole number)',
    )
  return Number(value.trim())
}

function backgroundTask(c: Context, h: HostedSession): BackgroundTaskInfo {
  const id = c.req.param('taskId') ?? ''
  const task = h.session.backgroundTasks().find((t) => t.id === id)
  if (task === undefined)
    throw new ApiError(404, 'task_not_found', 'no such background task in this session')
  return task
}

/** The task with its result as plain JSON (a ToolResult's `metadataJson` is a getter). */
const withPlainResult = (t: BackgroundTaskInfo) =>
  t.result ? { ...t, result: { ...t.result } } : t

const LANDING = (version: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>isoagent</title><link rel="icon" href="data:,"></head>
<body style="font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; line-height: 1.5">
<h1>isoagent ${version}</h1>
<p>The HTTP API of isoagent's coding-agent tools is served here. Every route but
<code>/v1/health</code> needs the token: <code>Authorization: Bearer &lt;token&gt;</code>
(or <code>?token=</code> on a GET).</p>
<p>The routes and every tool's argument schema: <a id="openapi" href="v1/openapi.json">/v1/openapi.json</a>.</p>
<script>
const t = new URLSearchParams(location.search).get('token')
if (t) document.getElementById('openapi').href += '?token=' + encodeURIComponent(t)
</script>
</body></html>
`

/** The route table of the HTTP API (the MCP endpoint is added beside it by the app). */
export function apiRoutes(ctx: AppContext): RouteSpec[] {
  return [
    ...serviceRoutes(ctx),
    ...sessionRoutes(ctx),
    ...callRoutes(ctx),
    ...agentRoutes(ctx),
    ...stateRoutes(ctx),
  ]
}

/** The routes outside any session: the landing page (or the web demo), health, the OpenAPI document. */
function serviceRoutes(ctx: AppContext): RouteSpec[] {
  return [
    {
      method: 'GET',
      path: '/',
      operationId: 'landing',
      summary: 'The web demo when the app serves it, else a page naming the API and its document',
      auth: false,
      hidden: true,
      responses: { '200': { description: 'HTML', contentType: 'text/html' } },
      handler: async (c) => (await ctx.assets?.(c.req.raw)) ?? c.html(LANDING(ctx.version)),
    },
    {
      method: 'GET',
      path: '/v1/health',
      operationId: 'health',
      summary: 'Liveness, version and runtime (no token needed)',
      auth: false,
      responses: {
        '200': json('Health', 'the server is up'),
        '403': failure('Host or Origin not allowed (the DNS-rebinding guard of a loopback server)'),
      },
      handler: (c) => c.json({ ok: true, version: ctx.version, runtime: runtimeName() }),
    },
    {
      method: 'GET',
      path: '/v1/openapi.json',
      operationId: 'openapi',
      summary: 'This OpenAPI 3.1 document, with every tool of the workspace and its schema',
      responses: {
        '200': { description: 'the document', schema: { type: 'object' } },
        '401': failure('missing or wrong bearer token'),
      },
      handler: async (c) =>
        c.json(
          buildOpenApi(ctx.routes, await ctx.toolDefinitions(c), {
            version: ctx.version,
            serverUrl: new URL(c.req.url).origin,
          }),
        ),
    },
  ]
}

/** Opening a session and looking at it and its tools. */
function sessionRoutes(ctx: AppContext): RouteSpec[] {
  return [
    {
      method: 'POST',
      path: '/v1/sessions',
      operationId: 'createSession',
      summary: 'Open a session over the server workspace',
      description:
        'The session offers the tools its workspace can serve. Past the session limit: 429.',
      requestBody: {
        required: false,
        schema: { type: 'object', additionalProperties: false, properties: {} },
      },
      responses: {
        '201': json('SessionCreated', 'the new session'),
        ...BODY_ERRORS,
        '401': failure('missing or wrong bearer token'),
        '429': failure('too many sessions (`too_many_sessions`)'),
      },
      handler: async (c) => {
        onlyFields(await readJsonObject(c), [])
        const hosted = await ctx.openSession(c)
        c.header('location', `/v1/sessions/${hosted.id}`)
        return c.json({ id: hosted.id, tools: hosted.session.toolNames() }, 201)
      },
    },
    {
      method: 'GET',
      path: '/v1/sessions/:id',
      operationId: 'getSession',
      summary: 'A session: its tools and the calls running now',
      responses: { '200': json('SessionInfo', 'the session'), ...SESSION_ERRORS },
      handler: withSession(ctx, (c, h) =>
        c.json({ id: h.id, tools: h.session.toolNames(), activeTools: h.session.activeTools() }),
      ),
    },
    {
      method: 'GET',
      path: '/v1/sessions/:id/tools',
      operationId: 'listTools',
      summary: 'The model-facing tool definitions (closed JSON Schemas)',
      responses: {
        '200': {
          description: 'toolDefinitions()',
          schema: { type: 'array', items: schemaRef('ToolDefinition') },
        },
        ...SESSION_ERRORS,
      },
      handler: withSession(ctx, (c, h) => c.json(h.session.toolDefinitions())),
    },
  ]
}

/** Tool calls and the session's event stream. */
function callRoutes(ctx: AppContext): RouteSpec[] {
  return [
    {
      method: 'POST',
      path: '/v1/sessions/:id/tools/:name',
      operationId: 'callTool',
      summary: 'Call a tool as the model would (permissions, confirmation, hooks, budget)',
      description:
        'A failing tool is a 200 with `exitCode: 1` and a typed `errorKind`; so is an unknown tool. A call that a rule asks about waits until the confirmation is answered.',
      requestBody: {
        required: false,
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { args: { type: 'object', description: "the tool's arguments" } },
        },
      },
      // An empty body (or one without `args`) is accepted as `{ "args": {} }`.
      perTool: (parameters) => ({
        type: 'object',
        additionalProperties: false,
        properties: { args: parameters },
      }),
      responses: {
        '200': json('ToolResult', 'the tool result, success or typed failure'),
        ...BODY_ERRORS,
        ...SESSION_ERRORS,
      },
      handler: withSession(ctx, async (c, h) => {
        const body = await readJsonObject(c)
        onlyFields(body, ['args'])
        const args = 'args' in body ? body.args : {}
        if (!isPlainObject(args))
          throw new ApiError(400, 'invalid_argument', '"args" must be a JSON object')
        const result = await h.session.governedTool(c.req.param('name')!, args, {
          signal: c.req.raw.signal,
        })
        return c.json({ ...result })
      }),
    },
    {
      method: 'GET',
      path: '/v1/sessions/:id/events',
      operationId: 'sessionEvents',
      summary: 'Server-sent events of the session',
      description:
        'Each event is `event: <type>`, `id: <seq>`, `data: <SessionEvent JSON>`. Reconnecting with `Last-Event-ID` replays the events the session still holds after that id; an `events_dropped` frame (without id) counts those it no longer holds.',
      parameters: [
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description: 'the id of the last event received',
          schema: { type: 'string', pattern: '^[0-9]+$' },
        },
      ],
      responses: {
        '200': {
          description: 'the event stream',
          contentType: 'text/event-stream',
          schema: schemaRef('SessionEvent'),
        },
        '400': failure('a Last-Event-ID that is not an event id'),
        ...SESSION_ERRORS,
      },
      handler: withSession(ctx, (c, h) => {
        const lastId = parseLastEventId(c.req.header('last-event-id'))
        const headers = {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          'x-accel-buffering': 'no',
        }
        // HEAD gets the headers only: a stream nobody reads would hold the session open.
        if (c.req.raw.method === 'HEAD') return new Response(null, { headers })
        return new Response(eventStream(h, lastId, c.req.raw.signal), { headers })
      }),
    },
  ]
}

/** The agent loop: a turn over POST /messages, and background tasks. */
function agentRoutes(ctx: AppContext): RouteSpec[] {
  return [
    {
      method: 'POST',
      path: '/v1/sessions/:id/messages',
      operationId: 'sendMessage',
      summary: 'Run one turn of the agent loop on the prompt, streaming its events',
      description:
        "The prompt joins the session's conversation; the model's tool calls are governed calls (permissions, confirmation, hooks, budget). The answer is server-sent events: `event: <type>`, `id: <n>`, `data: <AgentEvent JSON>`, ending with `finish` (or `error` with `{ code, message }` when the model fails). Closing the connection cancels the turn. One turn runs at a time per session.",
      requestBody: {
        required: true,
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['prompt'],
          properties: {
            prompt: { type: 'string', minLength: 1 },
            max_steps: { type: 'integer', minimum: 1, maximum: 1000 },
          },
        },
      },
      responses: {
        '200': {
          description: 'the turn as an event stream',
          contentType: 'text/event-stream',
          schema: schemaRef('AgentEvent'),
        },
        ...BODY_ERRORS,
        '400': failure(
          'malformed JSON, a missing or empty prompt, a bad max_steps, or a session without a model (`model_not_configured`)',
        ),
        ...SESSION_ERRORS,
        '409': failure('another turn is running in this session (`turn_in_progress`)'),
      },
      handler: withSession(ctx, async (c, h) => {
        const body = await readJsonObject(c)
        onlyFields(body, ['prompt', 'max_steps'])
        if (typeof body.prompt !== 'string' || body.prompt.trim() === '')
          throw new ApiError(400, 'invalid_argument', '"prompt" must be a non-empty string')
        const maxSteps = body.max_steps
        if (maxSteps !== undefined && typeof maxSteps !== 'number')
          throw new ApiError(400, 'invalid_argument', '"max_steps" must be an integer')
        if (!h.session.hasModel)
          throw new ApiError(
            400,
            'model_not_configured',
            'this server has no model: its sessions cannot run the agent loop',
          )
        if (h.session.turnRunning)
          throw new ApiError(409, 'turn_in_progress', 'another turn is running in this session')
        let events
        try {
          events = h.session.stream(body.prompt, {
            ...(maxSteps !== undefined ? { maxSteps } : {}),
          })
        } catch (error) {
          if (error instanceof IsoagentError && error.code === 'invalid_argument')
            throw new ApiError(400, 'invalid_argument', error.message)
          if (error instanceof IsoagentError && error.code === 'cancelled')
            throw new ApiError(409, 'session_closed', error.message)
          throw error
        }
        return new Response(messageStream(h, events, c.req.raw.signal), {
          headers: {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-cache, no-transform',
            'x-accel-buffering': 'no',
          },
        })
      }),
    },
    {
      method: 'GET',
      path: '/v1/sessions/:id/tasks',
      operationId: 'listBackgroundTasks',
      summary: 'Background tasks of the session (`task` with `background: true`)',
      responses: {
        '200': {
          description: 'backgroundTasks(), settled ones with their result',
          schema: { type: 'array', items: schemaRef('BackgroundTask') },
        },
        ...SESSION_ERRORS,
      },
      handler: withSession(ctx, (c, h) =>
        c.json(h.session.backgroundTasks().map((t) => withPlainResult(t))),
      ),
    },
    {
      method: 'GET',
      path: '/v1/sessions/:id/tasks/:taskId',
      operationId: 'getBackgroundTask',
      summary: 'One background task: its state and, once settled, its ToolResult',
      responses: {
        '200': json('BackgroundTask', 'the task'),
        '401': SESSION_ERRORS['401'],
        '404': failure('no such session, or no such task (`task_not_found`)'),
      },
      handler: withSession(ctx, (c, h) => c.json(withPlainResult(backgroundTask(c, h)))),
    },
    {
      method: 'DELETE',
      path: '/v1/sessions/:id/tasks/:taskId',
      operationId: 'cancelBackgroundTask',
      summary: 'Cancel a running background task',
      responses: {
        '204': noContent,
        '401': SESSION_ERRORS['401'],
        '404': failure('no such session, or no such task (`task_not_found`)'),
      },
      handler: withSession(ctx, (c, h) => {
        h.session.cancelTask(backgroundTask(c, h).id)
        return c.body(null, 204)
      }),
    },
  ]
}

/** Confirmations, artifacts, the snapshot, and closing the session. */
function stateRoutes(ctx: AppContext): RouteSpec[] {
  return [
    {
      method: 'GET',
      path: '/v1/sessions/:id/confirmations',
      operationId: 'listConfirmations',
      summary: 'Calls waiting for a human answer',
      responses: {
        '200': {
          description: 'pendingConfirmations()',
          schema: { type: 'array', items: schemaRef('PendingConfirmation') },
        },
        ...SESSION_ERRORS,
      },
      handler: withSession(ctx, (c, h) => c.json(h.session.pendingConfirmations())),
    },
    {
      method: 'POST',
      path: '/v1/sessions/:id/confirmations/:callId',
      operationId: 'answerConfirmation',
      summary: 'Approve or refuse a waiting call (by its call id or confirmation id)',
      requestBody: {
        required: true,
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['approved'],
          properties: { approved: { type: 'boolean' } },
        },
      },
      responses: {
        '204': noContent,
        ...BODY_ERRORS,
        ...SESSION_ERRORS,
        '409': failure('already answered, timed out or cancelled (`confirmation_answered`)'),
      },
      handler: withSession(ctx, async (c, h) => {
        const body = await readJsonObject(c)
        onlyFields(body, ['approved'])
        if (typeof body.approved !== 'boolean')
          throw new ApiError(400, 'invalid_argument', '"approved" must be true or false')
        const key = c.req.param('callId')!
        const pending = h.session
          .pendingConfirmations()
          .find((p) => p.id === key || p.callId === key)
        try {
          h.session.confirmToolUse(pending?.id ?? key, body.approved)
        } catch (error) {
          if (error instanceof IsoagentError && error.code === 'invalid_argument')
            throw new ApiError(409, 'confirmation_answered', error.message)
          throw new ApiError(
            404,
            'confirmation_not_found',
            `no pending confirmation for ${JSON.stringify(key.slice(0, 100))}`,
          )
        }
        return c.body(null, 204)
      }),
    },
    {
      method: 'GET',
      path: '/v1/sessions/:id/artifacts',
      operationId: 'getArtifact',
      summary: 'The full original of a projected result',
      parameters: [
        {
          name: 'uri',
          in: 'query',
          required: true,
          description: 'the `a3s://tool-output/<tool>/<sha256>` URI from the evidence',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'the bytes (text/plain when they are UTF-8)',
          contentType: 'application/octet-stream',
        },
        '400': failure('no `uri`, or not an a3s:// URI'),
        '401': SESSION_ERRORS['401'],
        '404': failure('no such session, or no such artifact (`artifact_not_found`)'),
      },
      handler: withSession(ctx, async (c, h) => {
        const uri = c.req.query('uri')
        if (uri === undefined || !uri.startsWith('a3s://'))
          throw new ApiError(400, 'invalid_argument', 'query parameter "uri" must be an a3s:// URI')
        const bytes = await h.session.getArtifact(uri)
        if (bytes === undefined)
          throw new ApiError(404, 'artifact_not_found', 'no artifact with this URI is held')
        let type = 'text/plain; charset=utf-8'
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(bytes)
        } catch {
          type = 'application/octet-stream'
        }
        return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': type } })
      }),
    },
    {
      method: 'GET',
      path: '/v1/sessions/:id/snapshot',
      operationId: 'getSnapshot',
      summary: 'Plain-JSON state to resume the session elsewhere',
      responses: { '200': json('SessionSnapshot', 'session.snapshot()'), ...SESSION_ERRORS },
      handler: withSession(ctx, (c, h) => c.json(h.session.snapshot())),
    },
    {
      method: 'DELETE',
      path: '/v1/sessions/:id',
      operationId: 'closeSession',
      summary: 'Close the session: running calls are aborted, event streams end',
      responses: { '204': noContent, ...SESSION_ERRORS },
      handler: async (c) => {
        if (!(await ctx.store.delete(c.req.param('id')!)))
          throw new ApiError(404, 'session_not_found', 'no such session')
        return c.body(null, 204)
      },
    },
  ]
}
