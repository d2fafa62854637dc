import type { Context } from 'hono'
import { ApiError } from './api-error.ts'

/** A JSON object from the request body (`{}` when empty); 400 for anything else. */
export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await c.req.text()
  } catch {
    throw new ApiError(400, 'invalid_json', 'the request body could not be read')
  }
  if (text.trim() === '') return {}
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ApiError(
      400,
      'invalid_json',
      `the body is not valid JSON: ${(error as Error).message.slice(0, 200)}`,
    )
  }
  if (!isPlainObject(value))
    throw new ApiError(400, 'invalid_argument', 'the body must be a JSON object')
  return value
}

/** Refuse fields other than `allowed` (typos would otherwise be ignored silently). */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      const expected = allowed.length === 0 ? 'no fields' : allowed.map((a) => `"${a}"`).join(', ')
      throw new ApiError(
        400,
        'invalid_argument',
        `unknown field ${JSON.stringify(key).slice(0, 80)}; expected ${expected}`,
      )
    }
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
