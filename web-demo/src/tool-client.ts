import type { SessionEvent, ToolDefinition, ToolResult } from '../../adapters/browser/index.ts'

/** A call waiting for a human answer (a permission rule asked). */
export interface PendingConfirmation {
  id: string
  callId?: string
  toolName: string
  args: unknown
}

/** Which workspace the UI drives. */
export type ClientMode = 'tab' | 'server'

/**
 * What every panel uses: one session, wherever it runs. Two implementations: the session in
 * this tab (`tab-client.ts`) and the HTTP API of the server that served the page
 * (`http-client.ts`). Calls take the governed (model-side) path in both, so permission rules
 * and confirmations apply alike.
 */
export interface ToolClient {
  readonly mode: ClientMode
  /** What the header shows: where the workspace lives. */
  readonly description: string
  /** The session's tool definitions (`toolDefinitions()`). */
  tools(): Promise<ToolDefinition[]>
  /** A governed call; a failure is a result with `exitCode: 1`, never a rejection. */
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>
  /** Session events as they happen; returns the unsubscribe. */
  onEvent(listener: (event: SessionEvent) => void): () => void
  pendingConfirmations(): Promise<PendingConfirmation[]>
  confirm(key: string, approved: boolean): Promise<void>
  close(): Promise<void>
}

/** A result for a failure on the client side (the network, a 4xx), shaped like a tool's. */
export function clientFailure(name: string, message: string): ToolResult {
  return {
    name,
    output: message,
    exitCode: 1,
    errorKind: { type: 'transport', op: 'http', message },
  }
}
