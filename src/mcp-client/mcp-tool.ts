import { Validator } from '@cfworker/json-schema'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { MUTATING, READ_ONLY, type JsonSchema, type ToolSpec } from '../kernel/tool-spec.ts'
import type { ArtifactStore } from '../projection/artifact-store.ts'
import { fastSchemaCheck } from './fast-schema-check.ts'
import type { McpConnection } from './mcp-connection.ts'
import { confirmationReason } from './mcp-gating.ts'
import { mapCallResult } from './mcp-result.ts'

/** An MCP tool as the session offers it: a kernel tool plus what governance reads of it. */
export interface McpToolEntry {
  spec: ToolSpec<Record<string, unknown>>
  /** Why a model-side call asks first (from the annotations), or undefined. */
  confirmation: string | undefined
  /** The original name on the server. */
  original: string
}

/**
 * The kernel tool `published` for `tool` of `connection`: the server's `inputSchema` (validated
 * by the kernel through an interpreting validator, after a fast check for flat schemas), scheduling from the annotations (read-only
 * tools run in parallel), the connection's deadline as the tool's own. Throws when the schema
 * does not compile (the caller skips such a tool).
 */
export function mcpToolEntry(
  published: string,
  tool: Tool,
  connection: McpConnection,
  artifacts: ArtifactStore,
): McpToolEntry {
  const schema = structuredClone(tool.inputSchema) as JsonSchema
  const validator = new Validator(
    schema as ConstructorParameters<typeof Validator>[0],
    '2020-12',
    true,
  )
  // Flat schemas (most tools') are checked by a few lookups; the validator decides the rest.
  const certainlyValid = fastSchemaCheck(schema)
  const a = tool.annotations ?? {}
  const readOnly = a.readOnlyHint === true && a.destructiveHint !== true
  const description =
    tool.description ?? tool.title ?? a.title ?? `${tool.name} (MCP server ${connection.name})`
  const spec: ToolSpec<Record<string, unknown>> = {
    name: published,
    description,
    parameters: schema,
    available: () => true,
    scheduling: readOnly
      ? { ...READ_ONLY, supports_pagination: false, max_parallelism: 8 }
      : { ...MUTATING, idempotent: a.idempotentHint === true },
    validate(args) {
      if (certainlyValid?.(args) === true) return undefined
      const result = validator.validate(args)
      if (result.valid) return undefined
      const first = result.errors[result.errors.length - 1]
      return first === undefined
        ? 'arguments are invalid'
        : `${first.instanceLocation.replace(/^#/, '') || 'arguments'}: ${first.error}`
    },
    ownDeadlineMs: () => connection.timeoutMs,
    async run(args, context) {
      const answer = await connection.call(tool.name, args, context.signal)
      return mapCallResult(answer, {
        name: published,
        server: connection.name,
        tool: tool.name,
        artifacts,
      })
    },
  }
  return {
    spec,
    confirmation: confirmationReason({ annotations: a, _meta: tool._meta }),
    original: tool.name,
  }
}
