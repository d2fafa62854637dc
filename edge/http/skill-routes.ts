import type { AppContext, RouteResponse, RouteSpec } from './route-spec.ts'
import { schemaRef } from './schemas.ts'
import { withSession } from './with-session.ts'

const failure = (description: string): RouteResponse => ({
  description,
  schema: schemaRef('Error'),
})

const SOURCE_SCHEMA = {
  type: 'object',
  required: ['kind'],
  properties: {
    kind: { type: 'string', enum: ['workspace', 'host', 'inline'] },
    path: { type: 'string' },
  },
}

/** `session.skills()`: the skills listed (never their bodies) and the files skipped, with why. */
const SKILLS_REPORT_SCHEMA = {
  type: 'object',
  required: ['skills', 'diagnostics'],
  properties: {
    skills: {
      type: 'array',
      items: {
        type: 'object',
        required: [
          'name',
          'description',
          'kind',
          'tags',
          'allowed_tools',
          'disable_model_invocation',
          'source',
        ],
        properties: {
          name: { type: 'string' },
          description: { type: 'string' },
          kind: { type: 'string', enum: ['instruction', 'persona', 'tool'] },
          tags: { type: 'array', items: { type: 'string' } },
          allowed_tools: { type: ['array', 'null'], items: { type: 'string' } },
          disable_model_invocation: { type: 'boolean' },
          source: SOURCE_SCHEMA,
        },
      },
    },
    diagnostics: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
}

/** `GET /v1/sessions/:id/skills`: the session's skills, as `session.skills()` reports them. */
export function skillRoutes(ctx: AppContext): RouteSpec[] {
  return [
    {
      method: 'GET',
      path: '/v1/sessions/:id/skills',
      operationId: 'listSkills',
      summary: "The session's skills (name, description, kind, source) and the files skipped",
      description:
        'Skills are found when the session opens, in the workspace folders `.agents/skills`, ' +
        '`.claude/skills` and `.a3s/skills`. Bodies are not listed: the `Skill` tool or the MCP ' +
        'resource `skill://<name>/SKILL.md` gives them.',
      responses: {
        '200': { description: 'session.skills()', schema: SKILLS_REPORT_SCHEMA },
        '401': failure('missing or wrong bearer token'),
        '404': failure('no such session (`session_not_found`)'),
      },
      handler: withSession(ctx, (c, h) => c.json(h.session.skills())),
    },
  ]
}
