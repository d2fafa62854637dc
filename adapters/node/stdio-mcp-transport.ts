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
      this.chunks.push(chunk.subarray(start, i))
      const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '')
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

  private line(line: string): void {
    // A server's log output on stdout: not a message, not an error either.
    if (!line.trimStart().startsWith('{')) return
    let message: JSONRPCMessage
    try {
      message = this.messages!.parse(JSON.parse(line))
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
