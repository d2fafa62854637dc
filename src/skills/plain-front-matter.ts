/**
 * The fast path of front matter parsing: a block made only of `key: value` lines whose values are
 * plain words, simple quoted strings, `true`/`false` or a flow list of plain words
 * (`[git, docs]`) — what nearly every SKILL.md holds — read without the YAML library, to the
 * same value the library gives. Anything else (comments, nesting, block scalars, numbers, nulls,
 * anchors, tags, escapes, duplicate keys, tabs) answers `undefined`: the caller parses it with
 * the library. A differential test holds the two to the same results.
 */

const KEY = /^[A-Za-z][A-Za-z0-9_-]*$/
/** YAML 1.2 core schema booleans. */
const BOOLEANS: Record<string, boolean> = {
  true: true,
  True: true,
  TRUE: true,
  false: false,
  False: false,
  FALSE: false,
}
/** Characters a plain value may not start with (indicators, and numbers, nulls, specials). */
const UNSAFE_START = /^[-?:,[\]{}#&*!|>'"%@`~.+0-9]/
/** Words the core schema reads as something other than a string. */
const NOT_A_STRING = /^(?:null|Null|NULL|true|True|TRUE|false|False|FALSE)$/

/** Characters YAML treats apart from ordinary text (controls, line separators, BOM). */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const SPECIAL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/
/** Spaces at either end (YAML trims spaces and tabs only, not every Unicode space). */
const EDGE_SPACES = /^ +| +$/g

/** A plain scalar that the YAML library reads as exactly this string, else undefined. */
function plainWord(text: string, inFlow: boolean): string | undefined {
  if (text === '' || UNSAFE_START.test(text) || NOT_A_STRING.test(text)) return undefined
  if (text.includes(': ') || text.includes(' #') || text.endsWith(':')) return undefined
  if (inFlow && /[[\]{},:]/.test(text)) return undefined
  return text
}

/** A one-line quoted string without escapes, else undefined. */
function quoted(text: string): string | undefined {
  if (text.length < 2) return undefined
  const q = text[0]
  if ((q !== '"' && q !== "'") || text[text.length - 1] !== q) return undefined
  const inner = text.slice(1, -1)
  if (q === '"') return /["\\]/.test(inner) ? undefined : inner
  // Single quotes: '' stands for one quote; any other lone quote ends the string early.
  if (inner.replace(/''/g, '').includes("'")) return undefined
  return inner.replace(/''/g, "'")
}

/** `[a, b]` of plain words (or `[]`), else undefined. */
function flowList(text: string): string[] | undefined {
  if (!text.startsWith('[') || !text.endsWith(']')) return undefined
  const inner = text.slice(1, -1).trim()
  if (inner === '') return []
  const items: string[] = []
  for (const raw of inner.split(',')) {
    const word = plainWord(raw.trim(), true)
    if (word === undefined) return undefined
    items.push(word)
  }
  return items
}

function value(text: string): unknown {
  if (text in BOOLEANS) return BOOLEANS[text]
  return quoted(text) ?? flowList(text) ?? plainWord(text, false)
}

/**
 * `block` (front matter without its `---` lines) as the YAML library would read it, when it is
 * made of plain `key: value` lines only; `undefined` when the library must read it.
 */
export function plainFrontMatter(block: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {}
  for (const line of block.split(/\r?\n/)) {
    if (SPECIAL_CHARS.test(line)) return undefined
    if (/^ *$/.test(line)) continue
    const colon = line.indexOf(': ')
    if (colon <= 0) return undefined
    const key = line.slice(0, colon)
    if (!KEY.test(key) || NOT_A_STRING.test(key) || Object.hasOwn(out, key)) return undefined
    const raw = line.slice(colon + 2).replace(EDGE_SPACES, '')
    const parsed = raw === '' ? undefined : value(raw)
    if (parsed === undefined) return undefined
    out[key] = parsed
  }
  return out
}
