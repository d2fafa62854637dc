import { IsoagentError } from '../errors.ts'
import type { ActiveTool, Kernel } from '../kernel/kernel.ts'
import type { ToolResult } from '../tool-result.ts'
import type { JsonSchema } from '../tools/tool.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'

/** A tool as offered to a model. */
export interface ToolDefinition {
  name: string
  description: string
  parameters: JsonSchema
}

/** Options of a host-direct call. */
export interface CallOptions {
  signal?: AbortSignal
}

/** Options of {@link Session.editFile}. */
export interface EditOptions {
  replace_all?: boolean
  dry_run?: boolean
  max_replacements?: number
  expected_replacements?: number
}

function throwIfFailed(result: ToolResult): ToolResult {
  if (result.exitCode !== 0) {
    throw new IsoagentError('invalid_argument', result.output, {
      data: { errorKind: result.errorKind },
    })
  }
  return result
}

/**
 * A tool surface over one workspace. Tools are registered from the workspace's capabilities;
 * every call goes through the session's kernel. `session.tool` and the typed helpers are
 * host-direct calls.
 */
export class Session {
  readonly workspace: WorkspaceServices
  private readonly kernel: Kernel

  /** @internal Use `agent.session(workspace, options)`. */
  constructor(kernel: Kernel) {
    this.kernel = kernel
    this.workspace = kernel.workspace
  }

  /** Names of the tools this session offers, in registration order. */
  toolNames(): string[] {
    return this.kernel.list().map((t) => t.name)
  }

  /** Model-facing definitions: closed JSON Schemas, no top-level oneOf. */
  toolDefinitions(): ToolDefinition[] {
    return this.kernel.list().map((t) => ({
      name: t.name,
      description: t.description,
      parameters: structuredClone(t.parameters),
    }))
  }

  /** Calls running now. */
  activeTools(): ActiveTool[] {
    return this.kernel.activeTools()
  }

  /** Call a tool as the host (trusted control plane). Never throws: failures are results. */
  tool(name: string, args: unknown, options: CallOptions = {}): Promise<ToolResult> {
    return this.kernel.invoke({ name, args, origin: 'host_direct', signal: options.signal })
  }

  /**
   * The `read` tool's output for `path` (numbered lines). Throws `IsoagentError` when the read
   * fails, with the typed `errorKind` in `data`.
   */
  async readFile(path: string, options: { offset?: number; limit?: number } = {}): Promise<string> {
    return throwIfFailed(await this.tool('read', { file_path: path, ...options })).output
  }

  /** Overwrite (or create) a text file. */
  writeFile(path: string, content: string): Promise<ToolResult> {
    return this.tool('write', { file_path: path, content })
  }

  /** List a directory (the root by default). */
  ls(path?: string): Promise<ToolResult> {
    return this.tool('ls', path === undefined ? {} : { path })
  }

  /** Replace `oldString` with `newString` in a file. */
  editFile(
    path: string,
    oldString: string,
    newString: string,
    options: EditOptions = {},
  ): Promise<ToolResult> {
    return this.tool('edit', {
      file_path: path,
      old_string: oldString,
      new_string: newString,
      ...options,
    })
  }

  /** Apply a unified diff to a file. */
  patchFile(path: string, diff: string): Promise<ToolResult> {
    return this.tool('patch', { file_path: path, diff })
  }

  /** Refuse new calls, abort running ones, release the workspace. */
  async close(): Promise<void> {
    if (this.kernel.closed) return
    this.kernel.close()
    await this.workspace.close?.()
  }
}
