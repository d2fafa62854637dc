import { ApiError } from './api-error.ts'
import type { AppContext, RouteSpec } from './route-spec.ts'
import { schemaRef } from './schemas.ts'
import { withSession } from './with-session.ts'

const STATUS_SCHEMA = {
  type: 'object',
  required: [
    'phase',
    'eligibleFiles',
    'indexedFiles',
    'indexedChunks',
    'coverageBps',
    'queueDepth',
    'failedFiles',
    'vectorRecords',
    'vectorBytes',
    'model',
  ],
  properties: {
    phase: { type: 'string', enum: ['building', 'ready', 'degraded', 'closed'] },
    eligibleFiles: { type: 'integer' },
    indexedFiles: { type: 'integer' },
    indexedChunks: { type: 'integer' },
    coverageBps: { type: 'integer' },
    queueDepth: { type: 'integer' },
    failedFiles: { type: 'integer' },
    vectorRecords: { type: 'integer' },
    vectorBytes: { type: 'integer' },
    model: {
      type: 'object',
      properties: {
        provider: { type: 'string' },
        model: { type: 'string' },
        dimension: { type: 'integer' },
      },
    },
  },
}

/** `GET /v1/sessions/:id/retrieval`: the session's retrieval index status. */
export function retrievalRoutes(ctx: AppContext): RouteSpec[] {
  return [
    {
      method: 'GET',
      path: '/v1/sessions/:id/retrieval',
      operationId: 'getRetrievalStatus',
      summary:
        "The semantic retrieval index's status (404 retrieval_not_configured without retrieval)",
      responses: {
        '200': { description: 'session.retrievalStatus()', schema: STATUS_SCHEMA },
        '401': { description: 'missing or wrong bearer token', schema: schemaRef('Error') },
        '404': {
          description:
            'no such session (`session_not_found`), or retrieval is off (`retrieval_not_configured`)',
          schema: schemaRef('Error'),
        },
      },
      handler: withSession(ctx, (c, hosted) => {
        const status = hosted.session.retrievalStatus()
        if (status === undefined)
          throw new ApiError(
            404,
            'retrieval_not_configured',
            'this session did not enable semantic retrieval',
          )
        return c.json(status)
      }),
    },
  ]
}
