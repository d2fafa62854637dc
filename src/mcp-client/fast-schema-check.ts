import type { JsonSchema } from '../kernel/tool-spec.ts'

/** Keywords of a flat object schema the fast check understands (annotations included). */
const ROOT_KEYS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  '$schema',
  'title',
  'description',
])
const PROPERTY_KEYS = new Set(['type', 'title', 'description', 'default', 'examples'])

type Primitive = 'string' | 'number' | 'integer' | 'boolean'

const IS: Record<Primitive, (value: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** The primitive type a property schema demands, when it uses no other validation keyword. */
function primitiveOf(schema: unknown): Primitive | undefined {
  if (!isRecord(schema)) return undefined
  for (const key of Object.keys(schema)) if (!PROPERTY_KEYS.has(key)) return undefined
  const type = schema.type
  return typeof type === 'string' && Object.hasOwn(IS, type) ? (type as Primitive) : undefined
}

/**
 * A check that answers `true` only when `args` certainly satisfy `schema`, for the flat schemas
 * most MCP tools publish (`type: object`, `properties` of one primitive type each, `required`,
 * `additionalProperties`): a few property lookups instead of the interpreting validator's walk,
 * which builds a JSON pointer per property on every call. `false` means "not sure" (the caller
 * then runs the full validator, which also words the error). Undefined for any other schema.
 */
export function fastSchemaCheck(schema: JsonSchema): ((args: unknown) => boolean) | undefined {
  if (!isRecord(schema) || schema.type !== 'object') return undefined
  for (const key of Object.keys(schema)) if (!ROOT_KEYS.has(key)) return undefined
  const closed = schema.additionalProperties === false
  if (schema.additionalProperties !== undefined && typeof schema.additionalProperties !== 'boolean')
    return undefined
  const properties = schema.properties ?? {}
  if (!isRecord(properties)) return undefined
  const types = new Map<string, (value: unknown) => boolean>()
  for (const [name, property] of Object.entries(properties)) {
    const primitive = primitiveOf(property)
    if (primitive === undefined) return undefined
    types.set(name, IS[primitive])
  }
  const required = schema.required ?? []
  if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) return undefined
  const needed = required as string[]
  return (args) => {
    if (!isRecord(args)) return false
    for (const name of needed) if (!Object.hasOwn(args, name)) return false
    for (const name of Object.keys(args)) {
      const is = types.get(name)
      if (is === undefined) {
        if (closed) return false
      } else if (!is(args[name])) return false
    }
    return true
  }
}
