import type { AgentEvent } from '../../../adapters/browser/index.ts'
import type { DemoContext, Panel } from '../context.ts'
import {
  loadSettings,
  saveSettings,
  type ChatProvider,
  type ModelSettings,
} from '../chat-settings.ts'
import { field, h, replace } from '../dom.ts'
import type { TabClient } from '../tab-client.ts'

const DEFAULT_URL: Record<ChatProvider, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
}

/** What a chat turn runs on: the in-tab session with the user's model, or the server's. */
type Turn = (prompt: string, signal: AbortSignal) => AsyncIterable<AgentEvent>

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : 'error'
}

/**
 * The agent chat. In "this tab" mode the user's model endpoint and key (kept in this tab's
 * `sessionStorage`) drive an agent session over the tab's workspace; in "server" mode the turn
 * goes through `POST /v1/sessions/:id/messages`. The agent and provider code load on first use.
 */
export function chatPanel(): Panel {
  return {
    id: 'chat',
    title: 'Chat',
    render(ctx: DemoContext) {
      const root = h('section', { class: 'chat', id: 'chat' })
      const log = h('ol', {
        id: 'chat-log',
        class: 'chat-log',
        'aria-label': 'Conversation',
        'data-empty-hint':
          'Ask the agent something about the workspace, e.g. “what does slugify do?”: its tool calls show here and in the timeline.',
      })
      const prompt = h('textarea', {
        id: 'chat-prompt',
        rows: 3,
        placeholder: 'Ask the agent to read, search or edit the workspace…',
      })
      const send = h('button', { type: 'button', id: 'chat-send' }, 'Send')
      const stop = h('button', { type: 'button', id: 'chat-stop', disabled: true }, 'Stop')
      const problem = h('div', { id: 'chat-error', 'aria-live': 'assertive' })
      let running: AbortController | undefined

      const tab = ctx.client.mode === 'tab' ? (ctx.client as unknown as TabClient) : undefined
      const settings = tab ? settingsForm() : undefined
      let modelInUse = ''

      const turn: Turn = tab
        ? async function* (text, signal) {
            const s = settings!.read()
            const id = JSON.stringify(s)
            if (id !== modelInUse) {
              const { modelOf } = await import('../chat-model.ts')
              await tab.useModel(modelOf(s))
              modelInUse = id
            }
            yield* tab.stream(text, signal)
          }
        : (text, signal) => (ctx.client as unknown as { stream: Turn }).stream(text, signal)

      const fail = (code: string, message: string) =>
        replace(
          problem,
          h(
            'p',
            { class: 'chat-error failed', role: 'alert', 'data-error-kind': code },
            `✗ ${code}: ${message}`,
          ),
        )

      const run = async () => {
        const text = prompt.value.trim()
        if (!text || running) return
        replace(problem)
        if (settings) {
          const missing = settings.missing()
          if (missing) return fail('invalid_argument', `enter the ${missing}`)
          saveSettings(settings.read())
        }
        running = new AbortController()
        send.disabled = true
        stop.disabled = false
        prompt.value = ''
        log.append(h('li', { class: 'msg user' }, h('div', { class: 'msg-text' }, text)))
        const answer = h('li', { class: 'msg assistant', 'data-state': 'streaming' })
        log.append(answer)
        try {
          for await (const event of turn(text, running.signal)) show(answer, event)
          answer.dataset.state = 'done'
        } catch (error) {
          answer.dataset.state = 'failed'
          const code = codeOf(error)
          if (code === 'model_not_configured') {
            replace(
              root,
              h(
                'p',
                { id: 'chat-not-configured', class: 'note', role: 'status' },
                'This server has no model configured, so it cannot run the agent. Start it with one: `isoagent serve --model-provider openai|anthropic [--model M] [--model-base-url U]` with the key in $ISOAGENT_MODEL_KEY (`npm start` does this by itself when OPENAI_API_KEY or ANTHROPIC_API_KEY is set), createApp({ agent: Agent.create({ model }) }) in code, or MODEL_* on the Worker. Or use the chat in "This tab" mode with your own endpoint.',
              ),
            )
            return
          }
          fail(code, code === 'cancelled' ? 'stopped' : (error as Error).message)
        } finally {
          running = undefined
          send.disabled = false
          stop.disabled = true
          ctx.refreshTree()
        }
      }
      send.onclick = () => void run()
      stop.onclick = () => running?.abort()
      prompt.onkeydown = (e) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void run()
      }

      replace(
        root,
        settings?.el ??
          h('p', { class: 'hint' }, 'Turns run on the server with the model it was started with.'),
        log,
        problem,
        field('Message (Ctrl+Enter sends)', prompt),
        h('div', { class: 'row' }, send, stop),
      )
      return root
    },
  }
}

/** Append one event of a turn to the assistant's entry. */
function show(answer: HTMLElement, event: AgentEvent): void {
  switch (event.type) {
    case 'text_delta': {
      let last = answer.lastElementChild
      if (!last?.classList.contains('msg-text')) {
        last = h('div', { class: 'msg-text' })
        answer.append(last)
      }
      last.append(event.delta)
      return
    }
    case 'tool_call':
      answer.append(
        h(
          'details',
          {
            class: 'chat-tool running',
            'data-call-id': event.toolCallId,
            'data-tool': event.toolName,
          },
          h('summary', {}, `${event.toolName} `, h('code', {}, JSON.stringify(event.args))),
          h('pre', { class: 'output delta' }),
        ),
      )
      return
    case 'tool_output_delta':
      callOf(answer, event.toolCallId)?.querySelector('.delta')?.append(event.delta)
      return
    case 'tool_result': {
      const call = callOf(answer, event.toolCallId)
      if (!call) return
      const kind = event.exitCode === 0 ? undefined : (event.errorKind?.type ?? 'error')
      call.classList.remove('running')
      call.classList.add(kind ? 'failed' : 'ok')
      call.dataset.exitCode = String(event.exitCode)
      if (kind) call.dataset.errorKind = kind
      call
        .querySelector('summary')!
        .append(
          h(
            'span',
            { class: 'chat-tool-status' },
            kind ? ` ✗ ${kind}` : ' ✓',
            ` (exitCode ${event.exitCode})`,
          ),
        )
      call
        .querySelector('.delta')!
        .replaceWith(h('pre', { class: 'output chat-tool-output', tabindex: 0 }, event.output))
      return
    }
    case 'finish':
      answer.dataset.finishReason = event.finishReason
      return
    default:
      return
  }
}

const callOf = (answer: HTMLElement, id: string): HTMLElement | undefined =>
  [...answer.querySelectorAll<HTMLElement>('.chat-tool')].find((el) => el.dataset.callId === id)

/** The in-tab model settings: provider, base URL, model and key (this tab only). */
function settingsForm() {
  const saved = loadSettings()
  const provider = h(
    'select',
    { id: 'chat-provider' },
    h('option', { value: 'openai' }, 'OpenAI-compatible'),
    h('option', { value: 'anthropic' }, 'Anthropic'),
  )
  provider.value = saved?.provider ?? 'openai'
  const baseURL = h('input', {
    id: 'chat-base-url',
    type: 'url',
    value: saved?.baseURL ?? DEFAULT_URL.openai,
  })
  const model = h('input', { id: 'chat-model', type: 'text', value: saved?.model ?? '' })
  const apiKey = h('input', {
    id: 'chat-key',
    type: 'password',
    autocomplete: 'off',
    value: saved?.apiKey ?? '',
  })
  provider.onchange = () => {
    if (Object.values(DEFAULT_URL).includes(baseURL.value))
      baseURL.value = DEFAULT_URL[provider.value as ChatProvider]
  }
  const read = (): ModelSettings => ({
    provider: provider.value as ChatProvider,
    baseURL: baseURL.value.trim(),
    model: model.value.trim(),
    apiKey: apiKey.value,
  })
  return {
    el: h(
      'fieldset',
      { id: 'chat-settings', class: 'chat-settings' },
      h('legend', {}, 'Model (kept in this tab only, sent only to the endpoint)'),
      field('Provider', provider),
      field('Base URL', baseURL, 'The endpoint must allow this page’s origin (CORS).'),
      field('Model', model),
      field('API key', apiKey),
    ),
    read,
    missing: (): string | undefined => {
      const s = read()
      if (!/^https?:\/\//.test(s.baseURL)) return 'base URL (http:// or https://)'
      return s.model ? undefined : 'model name'
    },
  }
}
