import type { ToolDefinition, ToolResult } from '../../adapters/browser/index.ts'
import { h } from './dom.ts'
import type { ToolClient } from './tool-client.ts'

/** What panels get: the client, its tools, and ways to reach the other panels. */
export interface DemoContext {
  readonly client: ToolClient
  readonly tools: ToolDefinition[]
  /** Whether the session offers `name`. */
  has(name: string): boolean
  /** Show `path` in the file panel, scrolled to (1-based) `line`. */
  openFile(path: string, line?: number): void
  /** Reload the file tree (after a write, an import, a checkout). */
  refreshTree(): void
  /** List the session's tools again (after an MCP server was added): `tools` is updated in
   * place and the listeners of {@link DemoContext.onToolsChanged} run. */
  refreshTools(): Promise<void>
  /** Call `listener` after each {@link DemoContext.refreshTools}. */
  onToolsChanged(listener: () => void): void
}

/**
 * One tab of the main area. The list in `panels/index.ts` decides which exist and in what
 * order: a new panel is one more entry there.
 */
export interface Panel {
  id: string
  title: string
  /** Built once per client; called again when the mode switches. */
  render(ctx: DemoContext): HTMLElement
  /** The panel became visible. */
  onShow?(): void
}

/** The error kind's `type` of a failed result, or `undefined` on success. */
export const errorType = (r: ToolResult): string | undefined =>
  r.exitCode === 0 ? undefined : (r.errorKind?.type ?? 'error')

/** A result as the UI shows it: status line (exit code, error kind) and the output. */
export function resultView(r: ToolResult, options: { output?: boolean } = {}): HTMLElement {
  const kind = errorType(r)
  return h(
    'div',
    {
      class: `result ${kind ? 'failed' : 'ok'}`,
      'data-exit-code': r.exitCode,
      'data-error-kind': kind,
      role: kind ? 'alert' : 'status',
    },
    h(
      'div',
      { class: 'result-status' },
      kind ? `✗ ${r.name} failed: ${kind}` : `✓ ${r.name}`,
      ` (exitCode ${r.exitCode})`,
    ),
    options.output === false ? null : h('pre', { class: 'output', tabindex: 0 }, r.output),
  )
}
