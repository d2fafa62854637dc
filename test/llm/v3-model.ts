// A hand-written AI SDK LanguageModelV3 whose requests go to the loopback fake, through this
// project's OpenAI-compatible provider (the wire protocol is the fake's, byte for byte).
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider'
import {
  openAICompatible,
  type ModelFinishReason,
  type ModelMessage,
  type ModelRequest,
  type ModelUsage,
} from '../../src/index.ts'

function requestOf(options: LanguageModelV3CallOptions): ModelRequest {
  const messages: ModelMessage[] = []
  for (const m of options.prompt) {
    if (m.role === 'system') messages.push({ role: 'system', content: m.content })
    else if (m.role === 'user')
      messages.push({
        role: 'user',
        content: m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
      })
    else if (m.role === 'assistant')
      messages.push({
        role: 'assistant',
        content: m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
        toolCalls: m.content.flatMap((p) =>
          p.type === 'tool-call'
            ? [{ id: p.toolCallId, name: p.toolName, arguments: JSON.stringify(p.input) }]
            : [],
        ),
      })
    else
      for (const p of m.content)
        if (p.type === 'tool-result')
          messages.push({
            role: 'tool',
            toolCallId: p.toolCallId,
            toolName: p.toolName,
            content: 'value' in p.output ? String(p.output.value) : p.output.type,
            isError: p.output.type.startsWith('error'),
          })
  }
  const choice = options.toolChoice
  const format = options.responseFormat
  return {
    messages,
    ...(choice === undefined
      ? {}
      : { toolChoice: choice.type === 'tool' ? { name: choice.toolName } : choice.type }),
    ...(format?.type === 'json'
      ? {
          responseFormat:
            format.schema === undefined
              ? { type: 'json_object' as const }
              : {
                  type: 'json_schema' as const,
                  name: format.name ?? 'response',
                  schema: format.schema as Record<string, unknown>,
                  strict: true,
                },
        }
      : {}),
    tools: (options.tools ?? []).flatMap((t) =>
      t.type === 'function'
        ? [
            {
              name: t.name,
              description: t.description ?? '',
              parameters: t.inputSchema as Record<string, unknown>,
            },
          ]
        : [],
    ),
  }
}

const finish = (r: ModelFinishReason): LanguageModelV3FinishReason => ({
  unified: r === 'tool_calls' ? 'tool-calls' : r === 'content_filter' ? 'content-filter' : r,
  raw: r,
})

const usage = (u: ModelUsage): LanguageModelV3Usage => ({
  inputTokens: {
    total: u.inputTokens,
    noCache: undefined,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: u.outputTokens, text: undefined, reasoning: undefined },
})

/** A LanguageModelV3 talking to the fake at `baseURL`; `requests` counts its calls. */
export function fakeV3Model(
  baseURL: string,
): LanguageModelV3 & { calls: LanguageModelV3CallOptions[] } {
  const inner = openAICompatible({ baseURL, model: 'fake-v3', maxRetries: 0 })
  const calls: LanguageModelV3CallOptions[] = []
  return {
    specificationVersion: 'v3',
    provider: 'fake',
    modelId: 'fake-v3',
    supportedUrls: {},
    calls,
    async doGenerate(options) {
      calls.push(options)
      const r = await inner.generate(
        requestOf(options),
        options.abortSignal ? { signal: options.abortSignal } : {},
      )
      const content: LanguageModelV3Content[] = []
      if (r.text !== '') content.push({ type: 'text', text: r.text })
      for (const c of r.toolCalls)
        content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.arguments })
      return { content, finishReason: finish(r.finishReason), usage: usage(r.usage), warnings: [] }
    },
    async doStream(options) {
      calls.push(options)
      const parts = inner.stream(
        requestOf(options),
        options.abortSignal ? { signal: options.abortSignal } : {},
      )
      const ids = new Map<number, string>()
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] })
          let textOpen = false
          try {
            for await (const p of parts) {
              if (p.type === 'text_delta') {
                if (!textOpen) controller.enqueue({ type: 'text-start', id: 't' })
                textOpen = true
                controller.enqueue({ type: 'text-delta', id: 't', delta: p.delta })
              } else if (p.type === 'tool_call_delta') {
                if (p.id !== undefined) {
                  ids.set(p.index, p.id)
                  controller.enqueue({ type: 'tool-input-start', id: p.id, toolName: p.name ?? '' })
                }
                if (p.argumentsDelta !== '')
                  controller.enqueue({
                    type: 'tool-input-delta',
                    id: ids.get(p.index)!,
                    delta: p.argumentsDelta,
                  })
              } else if (p.type === 'tool_call') {
                controller.enqueue({ type: 'tool-input-end', id: p.call.id })
                controller.enqueue({
                  type: 'tool-call',
                  toolCallId: p.call.id,
                  toolName: p.call.name,
                  input: p.call.arguments,
                })
              } else {
                if (textOpen) controller.enqueue({ type: 'text-end', id: 't' })
                controller.enqueue({
                  type: 'finish',
                  finishReason: finish(p.finishReason),
                  usage: usage(p.usage),
                })
              }
            }
          } catch (error) {
            controller.enqueue({ type: 'error', error })
          }
          controller.close()
        },
      })
      return { stream }
    },
  }
}
