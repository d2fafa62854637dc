import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import type { Session, ToolResult } from '../../adapters/index.ts'
import { VERSION } from '../version.ts'
import { serveSkillResources } from './skill-resources.ts'

/** Name and version the MCP server reports in `initialize`. */
export interface McpServerInfo {
  name: string
  version: string
}

/** Default {@link McpServerInfo}. */
export const MCP_SERVER_INFO: McpServerInfo = { name: 'isoagent', version: VERSION }

/**
 * What happens to a call that a permission rule (or the tool itself) `ask`s about:
 * `'elicit'` asks the MCP client through `elicitation/create` when it declared that capability
 * and refuses otherwise; `'refuse'` refuses at once; `'wait'` leaves it pending for someone else
 * (e.g. the HTTP confirmations route) to answer.
 */
export type McpConfirmationMode = 'elicit' | 'refuse' | 'wait'

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  serverInfo?: McpServerInfo
  /** Default `'elicit'`. */
  confirmations?: McpConfirmationMode
}

/**
 * The MCP result of a tool result: the output as text content, `isError` from `exitCode`, and
 * `structuredContent` holding the metadata (plus `errorKind` when the call failed). No tool
 * declares an `outputSchema`, so `structuredContent` is free-form (it is always an object).
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const failed = result.exitCode !== 0
  const mapped: CallToolResult = {
    content: [{ type: 'text', text: result.output }],
    isError: failed,
  }
  const structured: Record<string, unknown> = { ...(result.metadata ?? {}) }
  if (failed && result.errorKind !== undefined) structured.errorKind = result.errorKind
  if (Object.keys(structured).length > 0) mapped.structuredContent = structured
  return mapped
}

/** MCP tool definitions of the tools `session` serves (exactly `session.toolDefinitions()`). */
export function mcpTools(session: Session): Tool[] {
  return session.toolDefinitions().map((def) => ({
    name: def.name,
    description: def.description,
    inputSchema: def.parameters as Tool['inputSchema'],
  }))
}

/**
 * An MCP server (the SDK's low-level `Server`) over one isoagent session: `tools/list` lists
 * the tools the session's workspace serves; `tools/call` runs on the governed (model-side)
 * path, so the session's permissions, confirmations, hooks and budget apply, and the request's
 * cancellation aborts the call. `resources/list` and `resources/read` serve the session's skills
 * as `skill://<name>/SKILL.md` and `skill://<name>/<file>` (see `skill-resources.ts`).
 * Web-standard only: it runs in Node, workerd and browsers.
 * Closing the server does not close the session.
 */
export function createMcpServer(session: Session, options: McpServerOptions = {}): Server {
  const server = new Server(options.serverInfo ?? MCP_SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, logging: {} },
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mcpTools(session) }))
  serveSkillResources(server, session)
  const calls = new Set<OpenCall>()
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {}
    const open: OpenCall = {
      requestId: extra.requestId,
      toolName: request.params.name,
      args: JSON.stringify(args),
    }
    calls.add(open)
    try {
      const result = await session.governedTool(request.params.name, args, {
        signal: extra.signal,
      })
      return toCallToolResult(result)
    } finally {
      calls.delete(open)
    }
  })
  const mode = options.confirmations ?? 'elicit'
  if (mode !== 'wait') answerConfirmations(session, server, mode, calls)
  return server
}

const clip = (s: string, max = 400) => (s.length > max ? s.slice(0, max) + '…' : s)

/** A `tools/call` request being answered: an elicitation for its call goes on its stream. */
interface OpenCall {
  requestId: string | number
  toolName: string
  args: string
}

/** The open request a confirmation belongs to: same tool and arguments, else same tool. */
function requestOf(calls: Set<OpenCall>, toolName: string, args: unknown): OpenCall | undefined {
  let json: string | undefined
  try {
    json = JSON.stringify(args)
  } catch {
    json = undefined
  }
  let sameTool: OpenCall | undefined
  for (const call of calls) {
    if (call.toolName !== toolName) continue
    if (call.args === json) return call
    sameTool ??= call
  }
  return sameTool
}

/** An elicitation waits as long as the human takes (the session's own timeout still applies). */
const ELICITATION_TIMEOUT_MS = 2_147_483_647

function answerConfirmations(
  session: Session,
  server: Server,
  mode: 'elicit' | 'refuse',
  calls: Set<OpenCall>,
): void {
  const stop = new AbortController()
  const previous = server.onclose
  server.onclose = () => {
    stop.abort()
    previous?.()
  }
  const settle = (id: string, how: (id: string) => void) => {
    try {
      how(id)
    } catch {
      // answered elsewhere, timed out or cancelled meanwhile
    }
  }
  const answer = (id: string, approved: boolean) =>
    settle(id, (i) => session.confirmToolUse(i, approved))
  // Nobody was asked: say so instead of reporting a refusal nobody made.
  const unavailable = (id: string, why: string) => settle(id, (i) => session.cannotConfirm(i, why))
  const ask = async (id: string, toolName: string, args: unknown, reason?: string) => {
    if (mode === 'refuse')
      return unavailable(id, "this MCP server answers confirmations with 'refuse'")
    if (server.getClientCapabilities()?.elicitation === undefined)
      return unavailable(id, 'the MCP client did not declare the elicitation capability')
    const related = requestOf(calls, toolName, args)
    try {
      const reply = await server.elicitInput(
        {
          mode: 'form',
          message:
            `Allow ${toolName} ${clip(JSON.stringify(args))}?` +
            (reason !== undefined ? ` (${reason})` : ''),
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean', title: 'Approve this call' } },
            required: ['approve'],
          },
        },
        {
          signal: stop.signal,
          timeout: ELICITATION_TIMEOUT_MS,
          ...(related !== undefined ? { relatedRequestId: related.requestId } : {}),
        },
      )
      answer(id, reply.action === 'accept' && reply.content?.approve === true)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      unavailable(id, `the elicitation request failed: ${clip(message, 200)}`)
    }
  }
  void (async () => {
    for await (const event of session.events({ signal: stop.signal })) {
      if (event.type === 'confirmation_required')
        void ask(event.confirmationId, event.toolName, event.args, event.reason)
    }
  })().catch(() => undefined)
}
