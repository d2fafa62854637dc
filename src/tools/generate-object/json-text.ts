import { Allow, parse as parsePartial } from 'partial-json'

const FENCE_OPEN = /```[A-Za-z0-9_-]*[ \t]*\r?\n?/
const FENCE_CLOSE = /\r?\n?```[\s\S]*$/

/** The text inside the first code fence, or the whole text when there is none. */
function unfenced(text: string): string {
  const open = FENCE_OPEN.exec(text)
  if (open === null) return text
  const inside = text.slice(open.index + open[0].length)
  const close = FENCE_CLOSE.exec(inside)
  return close === null ? inside : inside.slice(0, close.index)
}

/** From the first `{` or `[` on (prose before a JSON object or array dropped). */
function fromBracket(text: string): string | undefined {
  const first = text.search(/[{[]/)
  return first < 0 ? undefined : text.slice(first)
}

/** A complete JSON value in a model's text answer (code fences and surrounding prose tolerated). */
export function parseJsonText(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const inner = unfenced(text).trim()
  let firstError: unknown
  const attempt = (candidate: string | undefined): { value: unknown } | undefined => {
    if (candidate === undefined || candidate === '') return undefined
    try {
      return { value: JSON.parse(candidate) as unknown }
    } catch (error) {
      firstError ??= error
      return undefined
    }
  }
  const tail = fromBracket(inner)
  const closing = tail === undefined ? -1 : Math.max(tail.lastIndexOf('}'), tail.lastIndexOf(']'))
  const found =
    attempt(inner) ??
    attempt(tail) ??
    (closing > 0 ? attempt(tail!.slice(0, closing + 1)) : undefined)
  if (found !== undefined) return { ok: true, value: found.value }
  const message = firstError instanceof Error ? firstError.message : 'empty answer'
  return { ok: false, error: `the answer is not valid JSON (${message})` }
}

/** The value so far of an incomplete JSON text (undefined while nothing parses yet). */
export function parsePartialJson(text: string): unknown {
  let t = unfenced(text).trimStart()
  if (!/^[{["\d-]/.test(t)) t = fromBracket(t) ?? t
  if (t.trim() === '') return undefined
  try {
    return parsePartial(t, Allow.ALL) as unknown
  } catch {
    return undefined
  }
}
