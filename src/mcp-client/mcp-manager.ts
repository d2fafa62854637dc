import { IsoagentError } from '../errors.ts'
import type { Kernel } from '../kernel/kernel.ts'
import { dynamicTools, installDefaultAsk, type DynamicTools } from './kernel-access.ts'
import { checkServerConfig, checkServerName, type McpServerConfig } from './mcp-config.ts'
import type { McpConnection, McpToolList } from './mcp-connection.ts'
import { mcpSecrets, secretsWorthRedacting } from './mcp-secrets.ts'
import { mcpPrefix, publishNames } from './mcp-tool-names.ts'
import { mcpToolEntry, type McpToolEntry } from './mcp-tool.ts'
import type { McpFetch } from './mcp-transports.ts'

/** One server in `session.mcpStatus()`. */
export interface McpServerStatus {
  name: string
  connected: boolean
  enabled: boolean
  toolCount: number
  transport: 'stdio' | 'http'
  /** The last failure (connect, list, a dropped connection), while it is the latest news. */
  error?: string
  /** Tools the server lists that the session does not offer, and why. */
  skipped?: string[]
}

/** How a server is reached: fetch for HTTP servers (trusted Web fetch, or the safe policy's). */
export interface McpAddOptions {
  fetch?: McpFetch
}

interface Entry {
  name: string
  config: McpServerConfig
  connection: McpConnection | undefined
  tools: Map<string, McpToolEntry>
  skipped: string[]
}

/**
 * The MCP servers of one session. Each server's tools join the session's kernel as
 * `mcp__<server>__<tool>` and leave it when the server is removed, lists them no more or drops
 * its connection; model-side calls of tools whose annotations are not read-only and closed-world
 * ask first (a permission rule naming the tool decides instead).
 */
export class McpManager {
  private readonly entries = new Map<string, Entry>()
  private readonly tools: DynamicTools
  private closed = false

  constructor(
    private readonly kernel: Kernel,
    private readonly defaultFetch: McpFetch,
  ) {
    this.tools = dynamicTools(kernel)
    installDefaultAsk(kernel, (name) => this.confirmationFor(name))
  }

  private confirmationFor(name: string): string | undefined {
    if (!name.startsWith('mcp__')) return undefined
    for (const entry of this.entries.values()) {
      const tool = entry.tools.get(name)
      if (tool !== undefined) return tool.confirmation
    }
    return undefined
  }

  /**
   * Add server `name` and connect it (unless `enabled: false`). Resolves to the published tool
   * names. Throws `IsoagentError`: `invalid_argument` for a bad name or config or a name in use,
   * `unsupported` (stdio outside Node), `transport`/`timeout`/`permission_denied` for a failed
   * connect — then the server stays in `mcpStatus()` with its error and no tools.
   */
  async add(
    name: string,
    config: McpServerConfig,
    options: McpAddOptions = {},
  ): Promise<{ tools: string[] }> {
    if (this.closed || this.kernel.closed)
      throw new IsoagentError('invalid_argument', 'the session is closed')
    checkServerName(name)
    checkServerConfig(name, config)
    const existing = [...this.entries.values()].find(
      (e) => e.name.toLowerCase() === name.toLowerCase(),
    )
    // A server whose connect failed (or a disabled one) may be added again under its own name.
    if (existing !== undefined && (existing.name !== name || existing.connection?.connected))
      throw new IsoagentError(
        'invalid_argument',
        `an MCP server named "${existing.name}" is already added (names are compared ignoring case)`,
      )
    if (existing !== undefined) await this.remove(name)
    const entry: Entry = {
      name,
      config: structuredClone(config),
      connection: undefined,
      tools: new Map(),
      skipped: [],
    }
    this.entries.set(name, entry)
    // Its credentials are redacted from here on, as those of servers configured at the start.
    this.kernel.addRedactSecrets(mcpSecrets({ [name]: entry.config }))
    if (config.enabled === false) return { tools: [] }
    // The SDK's client loads with the first server, so sessions without one never load it.
    const { McpConnection } = await import('./mcp-connection.ts')
    const connection = new McpConnection(name, entry.config, options.fetch ?? this.defaultFetch, {
      onTools: (list) => this.publish(entry, list),
      onState: () => undefined,
      onSecret: (token) => this.kernel.addRedactSecrets(secretsWorthRedacting([token])),
    })
    entry.connection = connection
    await connection.connect()
    return { tools: [...entry.tools.keys()] }
  }

  /** Remove server `name`: its tools leave the session, its connection closes. False if unknown. */
  async remove(name: string): Promise<boolean> {
    const entry = this.entries.get(name)
    if (entry === undefined) return false
    this.entries.delete(name)
    for (const published of entry.tools.keys()) this.tools.remove(published)
    entry.tools.clear()
    await entry.connection?.close()
    return true
  }

  /** Every server's state. */
  status(): McpServerStatus[] {
    return [...this.entries.values()].map((e) => ({
      name: e.name,
      connected: e.connection?.connected ?? false,
      enabled: e.config.enabled !== false,
      toolCount: e.tools.size,
      transport: e.config.transport,
      ...(e.connection?.lastError !== undefined ? { error: e.connection.lastError } : {}),
      ...(e.skipped.length > 0 ? { skipped: [...e.skipped] } : {}),
    }))
  }

  /** Close every server (stdio process groups are killed). */
  async close(): Promise<void> {
    this.closed = true
    await Promise.allSettled([...this.entries.keys()].map((name) => this.remove(name)))
  }

  /** Replace `entry`'s tools in the kernel by `list` (refusing names another tool holds). */
  private publish(entry: Entry, list: McpToolList): void {
    if (this.entries.get(entry.name) !== entry) return
    for (const published of entry.tools.keys()) this.tools.remove(published)
    entry.tools.clear()
    entry.skipped = [...list.notes]
    const names = publishNames(
      entry.name,
      list.tools.map((t) => t.name),
    )
    const prefix = mcpPrefix(entry.name)
    list.tools.forEach((tool, i) => {
      const published = names[i]!
      if (this.tools.has(published) || !published.startsWith(prefix)) {
        entry.skipped.push(`${tool.name}: "${published}" is ambiguous (another tool has that name)`)
        return
      }
      try {
        const made = mcpToolEntry(
          published,
          tool,
          entry.connection!,
          this.kernel.options.artifactStore,
        )
        entry.tools.set(published, made)
        this.tools.add(made.spec)
      } catch (error) {
        entry.skipped.push(
          `${tool.name}: its inputSchema does not compile (${String(error instanceof Error ? error.message : error)})`,
        )
      }
    })
  }
}
