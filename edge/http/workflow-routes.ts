import type { Context } from 'hono'
import {
  IsoagentError,
  type WorkflowHandle,
  type WorkflowInspection,
} from '../../adapters/index.ts'
import { ApiError } from './api-error.ts'
import { isPlainObject, onlyFields, readJsonObject } from './body.ts'
import type { HostedSession } from './hosted-session.ts'
import type { AppContext, RouteResponse, RouteSpec } from './route-spec.ts'
import { schemaRef } from './schemas.ts'
import { withSession } from './with-session.ts'

const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/
const BASE = '/v1/sessions/:id/workflows/:runId'

const failure = (description: string): RouteResponse => ({
  description,
  schema: schemaRef('Error'),
})
const ERRORS = {
  '400': failure('a run id that is not `[A-Za-z0-9_-]+` (at most 128), or a malformed body'),
  '401': failure('missing or wrong bearer token'),
  '404': failure(
    'no such session (`session_not_found`), workflows are off (`workflows_not_configured`), or no such run (`workflow_not_found`)',
  ),
}

/** The run handle of `:runId` in the session, with its id checked (400) and workflows on (404). */
function handleOf(c: Context, hosted: HostedSession): { runId: string; handle: WorkflowHandle } {
  const runId = c.req.param('runId') ?? ''
  if (!RUN_ID.test(runId))
    throw new ApiError(
      400,
      'invalid_argument',
      'the run id must match [A-Za-z0-9_-]+ (at most 128 characters)',
    )
  try {
    return { runId, handle: hosted.session.workflow(runId) }
  } catch (error) {
    if (error instanceof IsoagentError && error.code === 'unsupported')
      throw new ApiError(404, 'workflows_not_configured', 'this session has no dynamic_workflow')
    throw error
  }
}

/** Store errors a client can act on, as 4xx; anything else goes on to the 500 handler. */
async function storeCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof IsoagentError && error.code === 'invalid_argument')
      throw new ApiError(400, 'invalid_argument', error.message)
    if (error instanceof IsoagentError && error.code === 'permission_denied')
      throw new ApiError(403, 'permission_denied', error.message)
    throw error
  }
}

/** The inspection of a run that exists (404 `workflow_not_found` otherwise). */
async function knownRun(runId: string, handle: WorkflowHandle): Promise<WorkflowInspection> {
  const inspection = await storeCall(() => handle.inspect())
  if (inspection.status === 'unknown')
    throw new ApiError(404, 'workflow_not_found', `no workflow run ${runId} in this session`)
  return inspection
}

/** The source and input a run was created with (from its journal). */
async function createdWith(handle: WorkflowHandle) {
  const created = (await storeCall(() => handle.history())).find((e) => e.type === 'run_created')
  if (created?.type !== 'run_created' || created.source === undefined)
    throw new ApiError(404, 'workflow_not_found', 'the run journals no source to drive it with')
  return { source: created.source, input: created.input }
}

function inspectRoute(ctx: AppContext): RouteSpec {
  return {
    method: 'GET',
    path: BASE,
    operationId: 'inspectWorkflow',
    summary: 'A digest-only summary of a dynamic_workflow run: status, last sequence, step counts',
    responses: {
      '200': { description: 'session.workflow(runId).inspect()', schema: schemaRef('Workflow') },
      ...ERRORS,
    },
    handler: withSession(ctx, async (c, h) => {
      const { runId, handle } = handleOf(c, h)
      return c.json(await knownRun(runId, handle))
    }),
  }
}

function historyRoute(ctx: AppContext): RouteSpec {
  return {
    method: 'GET',
    path: `${BASE}/history`,
    operationId: 'workflowHistory',
    summary: "The run's journal: its events in order, sequence from 1",
    responses: {
      '200': {
        description: 'session.workflow(runId).history()',
        schema: { type: 'array', items: schemaRef('WorkflowEvent') },
      },
      ...ERRORS,
    },
    handler: withSession(ctx, async (c, h) => {
      const { runId, handle } = handleOf(c, h)
      await knownRun(runId, handle)
      return c.json(await storeCall(() => handle.history()))
    }),
  }
}

function cancelRoute(ctx: AppContext): RouteSpec {
  return {
    method: 'POST',
    path: `${BASE}/cancel`,
    operationId: 'cancelWorkflow',
    summary: 'Cancel a run: a run being driven stops once its running steps settle',
    description:
      'A run this session drives is aborted (`running: true` in the answer: its drive journals `run_cancelled` once its steps settle); an idle unfinished run is journaled `run_cancelled` at once. A run that has ended is a 409 `workflow_ended`.',
    requestBody: {
      required: false,
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { reason: { type: 'string', maxLength: 1000 } },
      },
    },
    responses: {
      '200': {
        description: 'the cancel was taken',
        schema: {
          type: 'object',
          required: ['run_id', 'cancelled', 'running'],
          properties: {
            run_id: { type: 'string' },
            cancelled: { const: true },
            running: { type: 'boolean' },
          },
        },
      },
      ...ERRORS,
      '409': failure('the run has ended (`workflow_ended`)'),
      '413': failure('body over the size limit'),
    },
    handler: withSession(ctx, async (c, h) => {
      const body = await readJsonObject(c)
      onlyFields(body, ['reason'])
      const reason = body.reason
      if (reason !== undefined && (typeof reason !== 'string' || reason.length > 1000))
        throw new ApiError(400, 'invalid_argument', '"reason" must be a string of at most 1000')
      const { runId, handle } = handleOf(c, h)
      const before = await knownRun(runId, handle)
      if (!(await storeCall(() => handle.cancel(reason))))
        throw new ApiError(409, 'workflow_ended', `workflow run ${runId} has ended`)
      return c.json({ run_id: runId, cancelled: true, running: before.running })
    }),
  }
}

function driveRoute(ctx: AppContext): RouteSpec {
  return {
    method: 'POST',
    path: `${BASE}/drive`,
    operationId: 'driveWorkflow',
    summary: 'Resume a run with its journaled source and input; the ToolResult of the drive',
    description:
      "A governed `dynamic_workflow` call (permissions, hooks, budget) with the source and input of the run's `run_created` event; `allowed_tools` and `limits` as the tool takes them. Completed steps are not run again. A run this session is driving now is a 409 `workflow_running`; a failed drive is a 200 with `exitCode: 1`.",
    requestBody: {
      required: false,
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          allowed_tools: { type: 'array', items: { type: 'string' } },
          limits: { type: 'object' },
        },
      },
    },
    responses: {
      '200': { description: 'the ToolResult of the drive', schema: schemaRef('ToolResult') },
      ...ERRORS,
      '409': failure('this session is driving the run now (`workflow_running`)'),
      '413': failure('body over the size limit'),
    },
    handler: withSession(ctx, async (c, h) => {
      const body = await readJsonObject(c)
      onlyFields(body, ['allowed_tools', 'limits'])
      if (body.limits !== undefined && !isPlainObject(body.limits))
        throw new ApiError(400, 'invalid_argument', '"limits" must be a JSON object')
      if (body.allowed_tools !== undefined && !Array.isArray(body.allowed_tools))
        throw new ApiError(400, 'invalid_argument', '"allowed_tools" must be an array')
      const { runId, handle } = handleOf(c, h)
      if ((await knownRun(runId, handle)).running)
        throw new ApiError(409, 'workflow_running', `workflow run ${runId} is being driven now`)
      const { source, input } = await createdWith(handle)
      const result = await h.session.governedTool(
        'dynamic_workflow',
        { source, input, run_id: runId, ...body },
        { signal: c.req.raw.signal },
      )
      return c.json({ ...result })
    }),
  }
}

/**
 * The control routes of `dynamic_workflow` runs (`session.workflow(runId)`): inspect, history,
 * cancel, and drive (a governed call: a network caller is a model-side caller).
 */
export function workflowRoutes(ctx: AppContext): RouteSpec[] {
  return [inspectRoute(ctx), historyRoute(ctx), cancelRoute(ctx), driveRoute(ctx)]
}
