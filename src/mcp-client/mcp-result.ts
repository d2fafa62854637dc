import { IsoagentError } from '../errors.ts'
import type { ArtifactStore } from '../projection/artifact-store.ts'
import { artifactUri } from '../projection/project.ts'
import { sha256Hex, utf8Length } from '../text/bytes.ts'
import { toolFailure, toolSuccess, type ToolResult } from '../tool-result.ts'

/** Size limits of one mapped MCP result; past any of them the call fails typed. */
export const MCP_RESULT_LIMITS = {
  maxContentItems: 64,
  maxStructuredContentBytes: 4 * 1024 * 1024,
  maxMetaBytes: 1024 * 1024,
  maxBlobBytes: 16 * 1024 * 1024,
  maxCallBytes: 32 * 1024 * 1024,
} as const

/** What a `tools/call` answered (the parts the mapping reads). */
export interface McpCallAnswer {
  content?: unknown
  structuredContent?: unknown
  isError?: unknown
  _meta?: unknown
}

/** Where a result is from and where its blobs go. */
export interface McpResultTarget {
  /** Published name (`mcp__srv__tool`): the result's name and the artifacts' folder. */
  name: string
  server: string
  /** The tool's original name on its server. */
  tool: string
  artifacts: ArtifactStore
}

type Part = Record<string, unknown>

class OverLimit extends Error {
  constructor(
    readonly limit: keyof typeof MCP_RESULT_LIMITS,
    message: string,
  ) {
    super(message)
  }
}

function base64Length(data: string): number {
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.floor((data.length * 3) / 4) - pad
}

function decodeBase64(data: string): Uint8Array {
  let binary: string
  try {
    binary = atob(data)
  } catch {
    throw new IsoagentError('transport', 'the MCP server sent a blob that is not valid base64')
  }
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? '')
}

/** Turns the parts of one answer into output lines, descriptors and stored artifacts. */
class Mapper {
  readonly lines: string[] = []
  readonly descriptors: Part[] = []
  readonly artifacts: { uri: string; mimeType: string; bytes: number; source?: string }[] = []
  private total = 0
  hasText = false

  constructor(private readonly target: McpResultTarget) {}

  private count(bytes: number): void {
    this.total += bytes
    if (this.total > MCP_RESULT_LIMITS.maxCallBytes)
      throw new OverLimit(
        'maxCallBytes',
        `the result is over ${MCP_RESULT_LIMITS.maxCallBytes} bytes`,
      )
  }

  private async blob(data: unknown, mimeType: string, source?: string) {
    if (typeof data !== 'string') throw new IsoagentError('transport', 'a blob without base64 data')
    const n = base64Length(data)
    if (n > MCP_RESULT_LIMITS.maxBlobBytes)
      throw new OverLimit(
        'maxBlobBytes',
        `a blob of ${n} bytes is over ${MCP_RESULT_LIMITS.maxBlobBytes}`,
      )
    this.count(n)
    const bytes = decodeBase64(data)
    const uri = artifactUri(this.target.name, await sha256Hex(bytes))
    await this.target.artifacts.put(uri, bytes)
    this.artifacts.push({ uri, mimeType, bytes: bytes.length, ...(source ? { source } : {}) })
    return { uri, bytes: bytes.length }
  }

  async part(part: Part): Promise<void> {
    const type = String(part.type)
    if (type === 'text') {
      const text = String(part.text ?? '')
      this.count(utf8Length(text))
      this.lines.push(text)
      this.hasText = true
      this.descriptors.push({ type, bytes: utf8Length(text) })
    } else if (type === 'image' || type === 'audio') {
      const mime = String(part.mimeType ?? 'application/octet-stream')
      const stored = await this.blob(part.data, mime)
      const label = type === 'image' ? 'Image' : 'Audio'
      this.lines.push(`[${label}: ${mime}, ${stored.bytes} bytes, artifact: ${stored.uri}]`)
      this.descriptors.push({ type, mimeType: mime, bytes: stored.bytes, artifact: stored.uri })
    } else if (type === 'resource') {
      await this.resource((part.resource ?? {}) as Part)
    } else if (type === 'resource_link') {
      const uri = String(part.uri ?? '')
      this.lines.push(`[Resource link: ${uri}${part.name ? ` (${String(part.name)})` : ''}]`)
      this.descriptors.push({ type, uri, ...(part.name ? { name: String(part.name) } : {}) })
    } else {
      this.descriptors.push({ type, ignored: true })
    }
  }

  private async resource(resource: Part): Promise<void> {
    const uri = String(resource.uri ?? '')
    const mime = String(resource.mimeType ?? 'application/octet-stream')
    if (typeof resource.blob === 'string') {
      const stored = await this.blob(resource.blob, mime, uri)
      this.lines.push(`[Resource: ${uri}, ${mime}, ${stored.bytes} bytes, artifact: ${stored.uri}]`)
      this.descriptors.push({
        type: 'resource',
        uri,
        mimeType: mime,
        bytes: stored.bytes,
        artifact: stored.uri,
      })
      return
    }
    const text = String(resource.text ?? '')
    this.count(utf8Length(text))
    this.lines.push(text)
    this.hasText = true
    this.descriptors.push({ type: 'resource', uri, mimeType: mime, bytes: utf8Length(text) })
  }
}

function checkSizes(answer: McpCallAnswer, content: Part[]): void {
  if (content.length > MCP_RESULT_LIMITS.maxContentItems)
    throw new OverLimit(
      'maxContentItems',
      `${content.length} content items, over ${MCP_RESULT_LIMITS.maxContentItems}`,
    )
  if (answer.structuredContent !== undefined) {
    const n = jsonBytes(answer.structuredContent)
    if (n > MCP_RESULT_LIMITS.maxStructuredContentBytes)
      throw new OverLimit(
        'maxStructuredContentBytes',
        `structuredContent of ${n} bytes is over ${MCP_RESULT_LIMITS.maxStructuredContentBytes}`,
      )
  }
  if (answer._meta !== undefined) {
    const n = jsonBytes(answer._meta)
    if (n > MCP_RESULT_LIMITS.maxMetaBytes)
      throw new OverLimit(
        'maxMetaBytes',
        `_meta of ${n} bytes is over ${MCP_RESULT_LIMITS.maxMetaBytes}`,
      )
  }
}

/**
 * Map a `tools/call` answer to a {@link ToolResult}: text parts joined by `\n`; images, audio and
 * resource blobs stored as artifacts with one line each; `structuredContent` as pretty JSON when
 * there is no text; `isError` → `exitCode: 1`. Past a limit of {@link MCP_RESULT_LIMITS} the
 * result is a `transport` failure naming the limit in `metadata.limit` (nothing partial is shown).
 */
export async function mapCallResult(
  answer: McpCallAnswer,
  target: McpResultTarget,
): Promise<ToolResult> {
  const content = Array.isArray(answer.content) ? (answer.content as Part[]) : []
  const mapper = new Mapper(target)
  try {
    checkSizes(answer, content)
    for (const part of content) await mapper.part(typeof part === 'object' && part ? part : {})
  } catch (error) {
    if (!(error instanceof OverLimit)) throw error
    const message = `MCP result of ${target.server}/${target.tool} refused: ${error.message}`
    return toolFailure(
      target.name,
      message,
      { type: 'transport', op: target.name, message },
      { limit: error.limit, mcp: { server: target.server, tool: target.tool } },
    )
  }
  const structured = answer.structuredContent
  if (!mapper.hasText && structured !== undefined)
    mapper.lines.unshift(JSON.stringify(structured, null, 2))
  const output = mapper.lines.join('\n')
  const isError = answer.isError === true
  const metadata = {
    mcp: {
      server: target.server,
      tool: target.tool,
      ...(structured !== undefined ? { structuredContent: structured } : {}),
      ...(answer._meta !== undefined ? { _meta: answer._meta } : {}),
      content: mapper.descriptors,
      artifacts: mapper.artifacts,
      isError,
    },
  }
  if (!isError) return toolSuccess(target.name, output, metadata)
  const message = output === '' ? `${target.tool} reported an error` : output
  return toolFailure(
    target.name,
    message,
    { type: 'invalid_argument', message: firstLine(message) },
    metadata,
  )
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? ''
  return line.length > 500 ? `${line.slice(0, 500)}…` : line
}
