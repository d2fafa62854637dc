import { Allow, parse as parsePartial } from 'partial-json'

/** `text` without a leading code fence (```json) and prose before the first `{` or `[`. */
function body(text: string): string {
  let t = text.trimStart()
  const fence = /^```[A-Za-z0-9_-]*[ \t]*\r?\n?/.exec(t)
  if (fence !== null) t = t.slice(fence[0].length)
  const first = t.search(/[{[]/)
  if (first > 0 && !/^\s*["\d\-tfn]/.test(t)) t = t.slice(first)
  return t
}

/** A complete JSON value in a model's text answer (fences and surrounding prose tolerated). */
export function parseJsonText(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  let t = body(text).trimEnd()
  t = t.replace(/\r?\n?```\s*$/, '').trimEnd()
  try {
    return { ok: true, value: JSON.parse(t) as unknown }
  } catch (error) {
    const last = Math.max(t.lastIndexOf('}'), t.lastIndexOf(']'))
    if (last > 0 && last < t.length - 1) {
      try {
        return { ok: true, value: JSON.parse(t.slice(0, last + 1)) as unknown }
      } catch {
        // fall through to the first error
      }
    }
    const message = error instanceof Error ? error.message : String(error)
    return { ok: false, error: `the answer is not valid JSON (${message})` }
  }
}

/** The value so far of an incomplete JSON text (undefined while nothing parses yet). */
export function parsePartialJson(text: string): unknown {
  const t = body(text).replace(/\r?\n?`{1,3}\s*$/, '')
  if (t.trim() === '') return undefined
  try {
    return parsePartial(t, Allow.ALL) as unknown
  } catch {
    return undefined
  }
}
