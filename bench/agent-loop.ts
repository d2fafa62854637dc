// Agent loop overhead: what a turn of `session.send()` / `session.stream()` costs per step beyond
// the model's own latency, with a zero-latency in-process model. The peer is the same steps done
// by hand: the same model stream consumed, the same tool calls made with `session.governedTool`
// (the same kernel path), the same messages appended. ours - peer, divided by the steps of the
// turn, is the loop's overhead per step (goal: <= 1 ms p50).
//
//   npx tsx bench/agent-loop.ts      (or `npm run bench:agent`)
import {
  Agent,
  memoryWorkspace,
  type LanguageModel,
  type ModelMessage,
  type ModelRequest,
  type ModelStreamPart,
} from '../adapters/index.ts'
import { compare, formatSpread, formatTable, machineLine, type Row } from './harness.ts'

/** Tool steps of a turn; the turn then ends with a text step. */
const TOOL_STEPS = 3
const STEPS = TOOL_STEPS + 1
const GOAL_US = 1000

/** A model answering at once: a read call on each of the first TOOL_STEPS requests of a turn. */
function instantModel(): LanguageModel {
  let ids = 0
  const answer = (request: ModelRequest): ModelStreamPart[] => {
    let sinceUser = 0
    for (let i = request.messages.length - 1; i >= 0; i--) {
      if (request.messages[i]!.role === 'user') break
      if (request.messages[i]!.role === 'tool') sinceUser++
    }
    if (sinceUser >= TOOL_STEPS)
      return [
        { type: 'text_delta', delta: 'All three files read.' },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } },
      ]
    const call = {
      id: `c${++ids}`,
      name: 'read',
      arguments: JSON.stringify({ file_path: `src/f${sinceUser}.ts` }),
    }
    return [
      { type: 'text_delta', delta: 'Reading.' },
      {
        type: 'tool_call_delta',
        index: 0,
        id: call.id,
        name: call.name,
        argumentsDelta: call.arguments,
      },
      { type: 'tool_call', index: 0, call },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 1, outputTokens: 1 } },
    ]
  }
  return {
    provider: 'instant',
    modelId: 'instant',
    capabilities: {
      tools: true,
      toolChoice: true,
      jsonSchema: false,
      jsonObject: false,
      streaming: true,
    },
    async generate() {
      throw new Error('not used')
    },
    async *stream(request) {
      yield* answer(request)
    },
  }
}

const files = Object.fromEntries(
  Array.from({ length: TOOL_STEPS }, (_, i) => [
    `src/f${i}.ts`,
    Array.from({ length: 20 }, (_, l) => `export const v${l} = ${l} // file ${i}`).join('\n') +
      '\n',
  ]),
)

async function main() {
  const model = instantModel()
  const agent = Agent.create({ model })
  const workspace = memoryWorkspace(files)
  const session = await agent.session(workspace)
  const streaming = await agent.session(workspace)
  const direct = await agent.session(workspace)
  const tools = direct.toolDefinitions()
  const history: ModelMessage[] = []

  /** The same turn by hand: model stream, governed calls, messages. */
  const byHand = async () => {
    history.push({ role: 'user', content: 'read the files' })
    for (;;) {
      let text = ''
      const calls = []
      for await (const part of model.stream({ messages: history, tools, toolChoice: 'auto' })) {
        if (part.type === 'text_delta') text += part.delta
        else if (part.type === 'tool_call') calls.push(part.call)
      }
      history.push({
        role: 'assistant',
        content: text,
        ...(calls.length ? { toolCalls: calls } : {}),
      })
      if (calls.length === 0) return text
      for (const call of calls) {
        const result = await direct.governedTool(call.name, JSON.parse(call.arguments))
        history.push({
          role: 'tool',
          toolCallId: call.id,
          toolName: call.name,
          content: result.output,
        })
      }
    }
  }
  const viaStream = async () => {
    let n = 0
    for await (const _event of streaming.stream('read the files')) n++
    return n
  }

  const check = await session.send('read the files')
  if (check.steps.length !== STEPS || check.finishReason !== 'stop')
    throw new Error(`unexpected turn: ${check.steps.length} steps, ${check.finishReason}`)

  console.log(machineLine())
  console.log(
    `Agent loop: one turn of ${STEPS} steps (${TOOL_STEPS} read calls, then text), zero-latency model`,
  )
  const rows: Row[] = []
  const options = { rounds: 7, slices: 6, sliceMs: 20, warmupMs: 300 }
  rows.push(
    await compare('session.send() turn', () => session.send('read the files'), byHand, options),
  )
  rows.push(await compare('session.stream() turn, every event read', viaStream, byHand, options))
  console.log()
  console.log(formatTable(rows, 'by hand'))
  console.log()
  for (const row of rows) {
    const perStep = (row.oursUs - row.peerUs) / STEPS
    const best = (row.oursUsRange[0] - row.peerUsRange[0]) / STEPS
    console.log(
      `  ${row.operation}: loop overhead ${perStep.toFixed(1)} µs per step (median; best round ${best.toFixed(1)} µs); goal <= ${GOAL_US} µs: ${perStep <= GOAL_US ? 'met' : 'missed'}`,
    )
  }
  console.log(formatSpread(rows))
  await Promise.all([session.close(), streaming.close(), direct.close()])
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
