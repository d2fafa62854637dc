import { Validator } from '@cfworker/json-schema'
import { IsoagentError } from '../../errors.ts'
import type { JsonSchema } from '../../kernel/tool-spec.ts'

/** Largest schema (UTF-8 bytes of its JSON). */
export const MAX_SCHEMA_BYTES = 64 * 1024
const MAX_DEPTH = 64
/** Validation errors fed back to the model per repair round. */
export const MAX_REPORTED_ERRORS = 10

/** A checked output schema: its validator, and the object form models are asked for. */
export interface ObjectSchema {
  schema: JsonSchema
  /** Object-rooted schema for tool and strict modes (`{ value }` around a non-object root). */
  objectRooted: JsonSchema
  /** Whether `objectRooted` wraps the schema in `{ value }`. */
  wrapped: boolean
  /** Problems of `value` against the schema (empty when valid), as lines a model can act on. */
  problems(value: unknown): string[]
}

const encoder = new TextEncoder()
const refuse = (message: string) => new IsoagentError('invalid_argument', `schema: ${message}`)

function resolvePointer(root: unknown, ref: string): boolean {
  if (ref === '#') return true
  if (!ref.startsWith('#/')) return false
  let node: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (typeof node !== 'object' || node === null || !(key in node)) return false
    node = (node as Record<string, unknown>)[key]
  }
  return typeof node === 'object' || typeof node === 'boolean'
}

function walk(node: unknown, depth: number, visit: (obj: Record<string, unknown>) => void): void {
  if (depth > MAX_DEPTH) throw refuse(`nested deeper than ${MAX_DEPTH} levels`)
  if (Array.isArray(node)) for (const item of node) walk(item, depth + 1, visit)
  else if (typeof node === 'object' && node !== null) {
    visit(node as Record<string, unknown>)
    for (const value of Object.values(node)) walk(value, depth + 1, visit)
  }
}

function isObjectRooted(schema: JsonSchema): boolean {
  return schema.type === 'object'
}

function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs)
  if (typeof node !== 'object' || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      out[key] =
        value === '#'
          ? '#/properties/value'
          : /^#\/(\$defs|definitions)(\/|$)/.test(value)
            ? value
            : `#/properties/value/${value.slice(2)}`
    } else out[key] = rewriteRefs(value)
  }
  return out
}

function wrap(schema: JsonSchema): JsonSchema {
  const { $defs, definitions, $schema: _s, ...rest } = schema
  return {
    type: 'object',
    properties: { value: rewriteRefs(rest) },
    required: ['value'],
    additionalProperties: false,
    ...($defs !== undefined ? { $defs: rewriteRefs($defs) } : {}),
    ...(definitions !== undefined ? { definitions: rewriteRefs(definitions) } : {}),
  }
}

function where(location: string): string {
  return location === '#' || location === '' ? '(root)' : location.replace(/^#/, '')
}

/**
 * Check a caller's output schema: a JSON object of at most 64 KiB, only local `$ref`s that
 * resolve, no deeper than 64 levels, accepted by the interpreting validator (draft 2020-12).
 * Throws `invalid_argument` otherwise.
 */
export function checkObjectSchema(schema: unknown): ObjectSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw refuse('must be a JSON Schema object')
  let json: string
  try {
    json = JSON.stringify(schema)
  } catch {
    throw refuse('must be plain JSON')
  }
  const bytes = encoder.encode(json).length
  if (bytes > MAX_SCHEMA_BYTES)
    throw refuse(`is ${bytes} bytes; at most ${MAX_SCHEMA_BYTES} (64 KiB) are accepted`)
  const copy = JSON.parse(json) as JsonSchema
  walk(copy, 0, (obj) => {
    for (const key of ['$ref', '$dynamicRef', '$recursiveRef'] as const) {
      const ref = obj[key]
      if (ref === undefined) continue
      if (key !== '$ref' || typeof ref !== 'string')
        throw refuse(`${key} is not supported; use a local $ref such as "#/$defs/name"`)
      if (!ref.startsWith('#'))
        throw refuse(`only local $refs are supported (got ${JSON.stringify(ref)})`)
      if (!resolvePointer(copy, ref))
        throw refuse(`$ref ${JSON.stringify(ref)} points at nothing in the schema`)
    }
  })
  let validator: Validator
  try {
    validator = new Validator(copy as ConstructorParameters<typeof Validator>[0], '2020-12', false)
    validator.validate(null)
  } catch (cause) {
    throw new IsoagentError('invalid_argument', 'schema: not a valid JSON Schema', { cause })
  }
  const wrapped = !isObjectRooted(copy)
  return {
    schema: copy,
    objectRooted: wrapped ? wrap(copy) : copy,
    wrapped,
    problems(value) {
      let result: ReturnType<Validator['validate']>
      try {
        result = validator.validate(value)
      } catch (error) {
        return [
          `(root): the value could not be validated (${error instanceof Error ? error.message : String(error)})`,
        ]
      }
      if (result.valid) return []
      const lines = result.errors
        .filter(
          (e) => !/^properties|^items|^\$ref|^allOf/.test(e.keyword) || result.errors.length === 1,
        )
        .map((e) => `${where(e.instanceLocation)}: ${e.error}`)
      const unique = [
        ...new Set(
          lines.length > 0
            ? lines
            : result.errors.map((e) => `${where(e.instanceLocation)}: ${e.error}`),
        ),
      ]
      return unique.length > MAX_REPORTED_ERRORS
        ? [
            ...unique.slice(0, MAX_REPORTED_ERRORS),
            `... and ${unique.length - MAX_REPORTED_ERRORS} more`,
          ]
        : unique
    },
  }
}
