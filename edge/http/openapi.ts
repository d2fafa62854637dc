import type { JsonSchema, ToolDefinition } from '../../adapters/index.ts'
import type { RouteResponse, RouteSpec } from './route-spec.ts'
import { COMPONENT_SCHEMAS } from './schemas.ts'

/** An OpenAPI 3.1 document (the parts this API uses). */
export interface OpenApiDocument {
  openapi: '3.1.0'
  info: {
    title: string
    version: string
    description: string
    license: { name: string; identifier: string }
  }
  servers: { url: string; description?: string }[]
  paths: Record<string, Record<string, JsonSchema>>
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> }
}

/** `/v1/sessions/:id` → `/v1/sessions/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')
}

function responses(specs: Record<string, RouteResponse>): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {}
  for (const [status, r] of Object.entries(specs)) {
    const type = r.contentType ?? (r.schema ? 'application/json' : undefined)
    out[status] = {
      description: r.description,
      ...(type ? { content: { [type]: r.schema ? { schema: r.schema } : {} } } : {}),
    }
  }
  return out
}

function operation(route: RouteSpec, omit: string[] = []): JsonSchema {
  const pathParams = [...route.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)]
    .map((m) => m[1]!)
    .filter((name) => !omit.includes(name))
    .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))
  const parameters = [
    ...pathParams,
    ...(route.parameters ?? []).map((p) => ({
      name: p.name,
      in: p.in,
      required: p.required,
      description: p.description,
      schema: p.schema,
    })),
  ]
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    security: route.auth === false ? [] : [{ bearer: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.requestBody
      ? {
          requestBody: {
            required: route.requestBody.required,
            content: { 'application/json': { schema: route.requestBody.schema } },
          },
        }
      : {}),
    responses: responses(route.responses),
  }
}

/**
 * The OpenAPI 3.1 document of `routes`: one operation per route, and for a route with
 * `perTool` one more per tool (`/v1/sessions/{id}/tools/read`, ...) whose request body inlines
 * the tool's argument schema.
 */
export function buildOpenApi(
  routes: readonly RouteSpec[],
  tools: readonly ToolDefinition[],
  info: { version: string; serverUrl?: string },
): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {}
  const add = (path: string, method: string, op: JsonSchema) => {
    ;(paths[path] ??= {})[method] = op
  }
  for (const route of routes) {
    if (route.hidden) continue
    const path = openApiPath(route.path)
    const method = route.method.toLowerCase()
    add(path, method, operation(route))
    if (route.perTool === undefined) continue
    for (const tool of tools) {
      const op = operation(route, ['name'])
      add(path.replace('{name}', encodeURIComponent(tool.name)), method, {
        ...op,
        operationId: `${route.operationId}_${tool.name.replace(/[^A-Za-z0-9_]/g, '_')}`,
        summary: `Call ${tool.name}`,
        description: tool.description,
        requestBody: {
          required: route.requestBody?.required ?? false,
          content: { 'application/json': { schema: route.perTool(tool.parameters) } },
        },
      })
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'isoagent',
      version: info.version,
      description:
        'Coding-agent tools over a workspace. Errors are `{ "error": { "code", "message" } }` with a 4xx status; a tool that fails is a 200 carrying its ToolResult with `exitCode: 1`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: info.serverUrl ?? '/', description: 'this server' }],
    paths,
    components: {
      schemas: structuredClone(COMPONENT_SCHEMAS),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    },
  }
}
