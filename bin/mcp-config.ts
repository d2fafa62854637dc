import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseMcpJson, type McpServerConfig } from '../adapters/index.ts'

/** Most bytes of an MCP config file. */
const MAX_CONFIG_BYTES = 1024 * 1024

/**
 * The MCP servers of `--mcp-config FILE`, else of `./.mcp.json` when `cwd` has one, else none.
 * Throws an `Error` naming the file for one that cannot be read or parsed.
 */
export function readMcpConfig(
  file: string | undefined,
  cwd: string = process.cwd(),
): Record<string, McpServerConfig> | undefined {
  const path = resolve(cwd, file ?? '.mcp.json')
  if (file === undefined && !existsSync(path)) return undefined
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`, { cause: error })
  }
  if (text.length > MAX_CONFIG_BYTES) throw new Error(`${path} is over ${MAX_CONFIG_BYTES} bytes`)
  try {
    return parseMcpJson(text)
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`, { cause: error })
  }
}
