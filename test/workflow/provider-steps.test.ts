// task and generate_object steps against the loopback fake provider, in both wire protocols:
// two sub-agent reviews fan out, then a structured summary of them; a second call with the same
// run id answers from the journal without asking the provider again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  anthropic,
  memoryWorkflowStore,
  memoryWorkspace,
  openAICompatible,
} from '../../adapters/index.ts'
import { startFakeProvider, type FakeProvider } from '../llm/fake-provider.ts'

const SOURCE = `export default async function run(ctx, inputs) {
  const areas = ['parser', 'lexer']
  const todo = areas.filter((a) => !(('review-' + a) in inputs.step_outputs))
  if (todo.length > 0)
    return { type: 'schedule_steps', steps: todo.map((a) => ({ step_id: 'review-' + a, step_name: 'task',
      input: { tasks: [{ agent: 'explore', description: 'review ' + a, prompt: 'Review src/' + a + '.ts' }] } })) }
  const reviews = areas.map((a) => inputs.step_outputs['review-' + a].metadata.results[0].text)
  if (!('summary' in inputs.step_outputs))
    return { type: 'schedule_step', step_id: 'summary', step_name: 'generate_object',
      input: { mode: 'prompt', prompt: 'Summarise: ' + reviews.join(' | '),
        schema: { type: 'object', additionalProperties: false, required: ['findings'],
          properties: { findings: { type: 'array', items: { type: 'string' } } } } } }
  return { type: 'complete', output: { reviews, summary: inputs.step_outputs.summary.metadata.object } }
}`

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(async () => fake?.close())

describe.each(['openai', 'anthropic'] as const)(
  'workflow steps over the %s protocol',
  (protocol) => {
    it('fans out two task steps, then a generate_object summary of them', async () => {
      const modelId = `wf-${protocol}`
      // Each review is one model turn answering in text; then the summary's JSON.
      fake.program(modelId, [
        { text: 'The code looks sound.' },
        { text: 'The code looks sound.' },
        { text: '{"findings": ["parser ok", "lexer ok"]}' },
      ])
      const options = { baseURL: fake.baseURL, apiKey: 'sk-test', model: modelId, retryDelayMs: 5 }
      const model = protocol === 'openai' ? openAICompatible(options) : anthropic(options)
      const store = memoryWorkflowStore()
      const session = await Agent.create({ model }).session(
        memoryWorkspace({ 'src/parser.ts': 'export {}\n', 'src/lexer.ts': 'export {}\n' }),
        { workflows: { store } },
      )
      const mine = () => fake.requests.filter((r) => r.body.model === modelId)
      const result = await session.tool('dynamic_workflow', { source: SOURCE, run_id: 'review' })
      expect(result.exitCode, result.output).toBe(0)
      expect(JSON.parse(result.output)).toEqual({
        reviews: ['The code looks sound.', 'The code looks sound.'],
        summary: { findings: ['parser ok', 'lexer ok'] },
      })
      const requests = mine()
      expect(requests).toHaveLength(3)
      expect(new Set(requests.map((r) => r.protocol))).toEqual(new Set([protocol]))
      // The summary's request carries what the sub-agents answered.
      expect(JSON.stringify(requests[2]!.body)).toContain('The code looks sound. | The code')
      const steps = (await store.history('review')).filter((e) => e.type === 'step_completed')
      expect(steps.map((e) => e.step_id).sort()).toEqual([
        'review-lexer',
        'review-parser',
        'summary',
      ])

      // The same run again: answered from the journal, the provider not asked again.
      const again = await session.tool('dynamic_workflow', { source: SOURCE, run_id: 'review' })
      expect(again.exitCode).toBe(0)
      expect(again.output).toBe(result.output)
      expect(mine()).toHaveLength(3)
      await session.close()
    })

    it('types a provider that refuses a step, and continues the workflow when told to', async () => {
      const modelId = `wf-refuse-${protocol}`
      fake.program(modelId, [{ status: 400, message: 'the request is invalid' }])
      const options = { baseURL: fake.baseURL, apiKey: 'sk-test', model: modelId, retryDelayMs: 5 }
      const model = protocol === 'openai' ? openAICompatible(options) : anthropic(options)
      const session = await Agent.create({ model }).session(memoryWorkspace({}), {
        workflows: { store: memoryWorkflowStore() },
      })
      const result = await session.tool('dynamic_workflow', {
        source: `export default async function run(ctx, inputs) {
        if ('g' in inputs.step_failures) return { type: 'complete', output: inputs.step_failures.g }
        return { type: 'schedule_step', step_id: 'g', step_name: 'generate_object',
          input: { mode: 'prompt', prompt: 'x', schema: { type: 'object' } },
          retry: { max_attempts: 1, on_exhausted: 'continue_workflow' } }
      }`,
        run_id: 'refused',
      })
      expect(result.exitCode, result.output).toBe(0)
      const failure = JSON.parse(result.output) as { error: string; attempts: number }
      expect(failure.attempts).toBe(1)
      expect(failure.error).toMatch(/invalid/)
      await session.close()
    })
  },
)
