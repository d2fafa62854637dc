import { Validator } from '@cfworker/json-schema'
import { IsoagentError } from '../errors.ts'
import { toolSuccess, type ToolResult } from '../tool-result.ts'
import {
  MUTATING,
  type JsonSchema,
  type ToolScheduling,
  type ToolSpec,
} from '../kernel/tool-spec.ts'

/** What a custom tool can do while it runs: only governed calls, never host-trusted ones. */
export interface ToolRuntime {
  callId: string
  signal: AbortSignal
  /** Call another tool as a governed `nested` call (permissions, hooks, budget all apply). */
  invoke(name: string, args: unknown): Promise<ToolResult>
  /** Stream part of the output while running (`tool_output_delta` events). */
  emitOutput(delta: string): void
}

/** A host-defined tool registered on a session with `tools: [...]`. */
export interface CustomTool {
  /** `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, not a built-in name. */
  name: string
  description: string
  /** Closed JSON Schema object (`additionalProperties: false`, no top-level oneOf/anyOf). */
  parameters: JsonSchema
  /** Defaults to a mutating, non-idempotent, serial tool. */
  scheduling?: Partial<ToolScheduling>
  /** Argument that `tool(glob)` permission rules match. */
  primaryArgument?: string
  /** Return a result, or a string (a successful output). Throwing gives a typed failure. */
  run(
    args: Record<string, unknown>,
    runtime: ToolRuntime,
  ): Promise<ToolResult | string> | ToolResult | string
}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/

/** Check a custom tool and turn it into a kernel tool (validated by an interpreting validator). */
export function customToolSpec(
  tool: CustomTool,
  reserved: ReadonlySet<string>,
): ToolSpec<Record<string, unknown>> {
  const refuse = (why: string) =>
    new IsoagentError('invalid_argument', `custom tool ${JSON.stringify(tool?.name)}: ${why}`)
  if (typeof tool !== 'object' || tool === null) throw refuse('not an object')
  if (typeof tool.name !== 'string' || !NAME.test(tool.name))
    throw refuse(`name must match ${NAME}`)
  if (reserved.has(tool.name)) throw refuse('name is taken by a built-in tool')
  if (typeof tool.description !== 'string' || tool.description.length === 0)
    throw refuse('needs a description')
  if (typeof tool.run !== 'function') throw refuse('needs a run function')
  const schema = tool.parameters
  if (typeof schema !== 'object' || schema === null || schema.type !== 'object')
    throw refuse('parameters must be a JSON Schema with type "object"')
  if (schema.additionalProperties !== false)
    throw refuse('parameters must be closed (additionalProperties: false)')
  if ('oneOf' in schema || 'anyOf' in schema || 'allOf' in schema)
    throw refuse('parameters must not have a top-level oneOf/anyOf/allOf')
  let validator: Validator
  try {
    validator = new Validator(schema as ConstructorParameters<typeof Validator>[0], '2020-12', true)
  } catch (cause) {
    throw new IsoagentError(
      'invalid_argument',
      `custom tool ${tool.name}: parameters are not a valid JSON Schema`,
      { cause },
    )
  }
  const frozen = structuredClone(schema)
  return {
    name: tool.name,
    description: tool.description,
    parameters: frozen,
    available: () => true,
    scheduling: { ...MUTATING, ...tool.scheduling },
    ...(tool.primaryArgument ? { primaryArgument: tool.primaryArgument } : {}),
    validate(args) {
      const result = validator.validate(args)
      if (result.valid) return undefined
      const first = result.errors[result.errors.length - 1]
      return first === undefined
        ? 'arguments are invalid'
        : `${first.instanceLocation.replace(/^#/, '') || 'arguments'}: ${first.error}`
    },
    async run(args, context) {
      const runtime: ToolRuntime = {
        callId: context.callId,
        // Made when the tool first reads it (most never do).
        get signal() {
          return context.signal
        },
        invoke: (name, args) => context.invoke(name, args),
        emitOutput: (delta) => context.emitOutput(String(delta)),
      }
      const out = await tool.run(structuredClone(args), runtime)
      if (typeof out === 'string') return toolSuccess(tool.name, out)
      if (
        typeof out !== 'object' ||
        out === null ||
        typeof out.output !== 'string' ||
        (out.exitCode !== 0 && out.exitCode !== 1)
      ) {
        throw new IsoagentError(
          'invalid_argument',
          `custom tool ${tool.name} returned something that is not a ToolResult`,
        )
      }
      if (out.exitCode === 1 && out.errorKind === undefined) {
        return {
          ...out,
          name: tool.name,
          errorKind: { type: 'invalid_argument', message: out.output },
        }
      }
      return { ...out, name: tool.name }
    },
  }
}
