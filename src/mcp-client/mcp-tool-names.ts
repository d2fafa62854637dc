/** Longest published tool name (OpenAI's limit on function names). */
export const MCP_MAX_TOOL_NAME = 64
/** Most tools one server may publish; the rest are refused (listed in `mcpStatus().skipped`). */
export const MCP_MAX_TOOLS_PER_SERVER = 1024

/** FNV-1a of `text`, 6 base-36 characters: a short, stable, synchronous suffix. */
export function shortHash(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(36).padStart(6, '0').slice(-6)
}

/** The prefix of every tool of server `server`: `mcp__<server>__`. */
export function mcpPrefix(server: string): string {
  return `mcp__${server}__`
}

/** `name` with every character outside `[A-Za-z0-9_-]` replaced by `_` (`_` when empty). */
export function sanitizeToolName(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_-]/g, '_')
  return clean === '' ? '_' : clean
}

/**
 * Published names of one server's tools, in order: `mcp__<server>__<sanitised>`, cut to 64
 * characters with `_<hash>` of the original name when it is too long or when two originals
 * sanitise to the same name (every original then keeps a distinct name).
 */
export function publishNames(server: string, originals: readonly string[]): string[] {
  const prefix = mcpPrefix(server)
  const plain = originals.map((o) => prefix + sanitizeToolName(o))
  const counts = new Map<string, number>()
  for (const p of plain) counts.set(p, (counts.get(p) ?? 0) + 1)
  return plain.map((p, i) => {
    if (p.length <= MCP_MAX_TOOL_NAME && counts.get(p) === 1) return p
    const suffix = `_${shortHash(originals[i]!)}`
    return p.slice(0, MCP_MAX_TOOL_NAME - suffix.length) + suffix
  })
}
