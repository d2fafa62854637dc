import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import type { McpStdioConfig } from '../../src/index.ts'
import { signalGroup, trackGroup, untrackGroup } from './process-groups.ts'

/** Longest line (one JSON-RPC message) a stdio server may write: past it the transport closes. */
export const MCP_STDIO_MAX_LINE_BYTES = 48 * 1024 * 1024
/** How long a server gets after SIGTERM before its process group is killed. */
export const MCP_STDIO_KILL_GRACE_MS = 1000
const STDERR_TAIL = 2048
const OPEN_BRACE = 0x7b
const CR = 0x0d
/** Bytes `String.prototype.trimStart` drops before a message's `{` (ASCII whitespace, BOM aside). */
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d])

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const isRequestId = (id: unknown) =>
  typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id))

/**
 * Whether `value` is a JSON-RPC message of the plain shapes the SDK's `JSONRPCMessageSchema`
 * accepts, checked by hand: a result `{ jsonrpc, id, result }` or a request or notification
 * `{ jsonrpc, id?, method, params? }`, without `_meta` (whose fields the schema types). Exactly
 * those keys: the schema's objects are strict. `false` is "not sure", not "invalid": the caller
 * then parses with the schema, which copies the whole message through zod on every line.
 */
export function plainMessage(value: unknown): value is JSONRPCMessage {
  if (!isRecord(value) || value.jsonrpc !== '2.0') return false
  let keys = 1
  if ('id' in value) {
    if (!isRequestId(value.id)) return false
    keys++
  }
  if ('result' in value) {
    const result = value.result
    return keys === 2 && Object.keys(value).length === 3 && isRecord(result) && !('_meta' in result)
  }
  if (typeof value.method !== 'string') return false
  keys++
  if ('params' in value) {
    if (!isRecord(value.params) || '_meta' in value.params) return false
    keys++
  }
  return Object.keys(value).length === keys
}

/**
 * The MCP stdio transport of Node: the server runs in its own process group (`detached`), its
 * stdout is read as newline-delimited JSON-RPC, and closing the transport ends the whole group
 * (SIGTERM, then SIGKILL after {@link MCP_STDIO_KILL_GRACE_MS}). A line that starts with `{` but
 * is not a JSON-RPC message, or a line over {@link MCP_STDIO_MAX_LINE_BYTES}, breaks the
 * connection (pending calls fail `transport`); other lines (a server's log output) are ignored.
 */
export class NodeStdioMcpTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private child: ChildProcessWithoutNullStreams | undefined
  private chunks: Buffer[] = []
  private size = 0
  private stderr = ''
  private exited: Promise<void> | undefined
  private closing = false
  /** The SDK's message schema (zod), loaded by `start`: before it no line arrives. */
  private messages: typeof JSONRPCMessageSchema | undefined

  constructor(private readonly config: McpStdioConfig) {}

  async start(): Promise<void> {
    // The SDK's stdio module loads child_process (cross-spawn): imported at the first stdio
    // server, so a process that starts none never loads it.
    // Its message schemas (zod) likewise: a CLI call that starts no server never compiles them.
    const [{ getDefaultEnvironment }, { JSONRPCMessageSchema: messages }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ])
    this.messages = messages
    return new Promise((resolve, reject) => {
      const { spawn } = process.getBuiltinModule('node:child_process')
      const child = spawn(this.config.command, this.config.args ?? [], {
        cwd: this.config.cwd,
        env: { ...getDefaultEnvironment(), ...this.config.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        windowsHide: true,
      })
      this.child = child
      this.exited = new Promise((done) => child.once('close', () => done()))
      child.once('error', (error) => {
        reject(error)
        this.fail(error)
      })
      child.once('spawn', () => {
        if (child.pid !== undefined) trackGroup(child.pid, 'SIGKILL')
        resolve()
      })
      child.once('exit', (code, signal) => {
        if (child.pid !== undefined) untrackGroup(child.pid)
        if (!this.closing) {
          const tail = this.stderr.trim().split('\n').slice(-3).join(' | ')
          this.onerror?.(
            new Error(
              `the server process exited (${signal ?? `code ${code}`})${tail ? `: ${tail}` : ''}`,
            ),
          )
        }
      })
      child.once('close', () => this.onclose?.())
      child.stdout.on('data', (chunk: Buffer) => this.read(chunk))
      child.stderr.on('data', (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)
      })
      child.stdin.on('error', (error) => this.onerror?.(error))
    })
  }

  private read(chunk: Buffer): void {
    let start = 0
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      const tail = chunk.subarray(start, i)
      // A line in one chunk (the usual case) is decoded in place, without a copy.
      const line = this.chunks.length === 0 ? tail : Buffer.concat([...this.chunks, tail])
      this.chunks = []
      this.size = 0
      start = i + 1
      this.line(line)
      if (this.closing) return
    }
    if (start < chunk.length) {
      this.chunks.push(chunk.subarray(start))
      this.size += chunk.length - start
      if (this.size > MCP_STDIO_MAX_LINE_BYTES)
        this.fail(new Error(`the server wrote a line over ${MCP_STDIO_MAX_LINE_BYTES} bytes`))
    }
  }

  private line(bytes: Buffer): void {
    let from = 0
    while (from < bytes.length && WHITESPACE.has(bytes[from]!)) from++
    // A server's log output on stdout: not a message, not an error either.
    if (bytes[from] !== OPEN_BRACE) return
    const end = bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length
    let message: JSONRPCMessage
    try {
      const value: unknown = JSON.parse(bytes.toString('utf8', from, end))
      // The common shapes are checked by hand; anything else goes through the SDK's schema.
      message = plainMessage(value) ? value : this.messages!.parse(value)
    } catch {
      this.fail(new Error('the server wrote invalid JSON-RPC on stdout'))
      return
    }
    this.onmessage?.(message)
  }

  /** A broken stream: report it and end the server (pending requests then fail). */
  private fail(error: Error): void {
    this.onerror?.(error)
    void this.close()
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin
    if (stdin === undefined || this.closing) return Promise.reject(new Error('not connected'))
    // Resolved once buffered (as the SDK's own stdio transport does); write errors reach onerror.
    return new Promise((resolve) => {
      if (stdin.write(JSON.stringify(message) + '\n')) resolve()
      else stdin.once('drain', () => resolve())
    })
  }

  /** End the server's whole process group and wait until it has exited. */
  async close(): Promise<void> {
    const child = this.child
    if (child === undefined) return
    if (this.closing) return this.exited
    this.closing = true
    const pid = child.pid
    child.stdin.end()
    if (pid !== undefined) signalGroup(pid, 'SIGTERM')
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      this.exited,
      new Promise<void>((r) => (timer = setTimeout(r, MCP_STDIO_KILL_GRACE_MS))),
    ])
    clearTimeout(timer)
    // The leader may be gone while others of its group live on: end them all.
    if (pid !== undefined) {
      signalGroup(pid, 'SIGKILL')
      untrackGroup(pid)
    }
    await this.exited
  }
}

/** The stdio launcher `isoagent/node` registers: {@link NodeStdioMcpTransport}. */
export function nodeStdioMcpLauncher(config: McpStdioConfig): Transport {
  return new NodeStdioMcpTransport(config)
}
