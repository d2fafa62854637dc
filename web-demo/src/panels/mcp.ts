import type { McpServerStatus } from '../../../adapters/browser/index.ts'
import type { DemoContext, Panel } from '../context.ts'
import { field, h, replace } from '../dom.ts'
import type { HttpClient } from '../http-client.ts'
import { block, capabilityLayout, note, say } from './capability-layout.ts'
import { sessionState } from './session-state.ts'

/** One MCP server: its state and the session tools it publishes (`mcp__<server>__<tool>`). */
function serverView(s: McpServerStatus, tools: string[]): HTMLElement {
  return h(
    'li',
    { class: 'mcp-server', 'data-server': s.name },
    h('strong', {}, s.name),
    ` (${s.transport}) ${s.connected ? 'connected' : 'not connected'}` +
      `${s.enabled ? '' : ', disabled'} · ${s.toolCount} tools`,
    s.error ? h('div', { class: 'failed' }, `last error: ${s.error}`) : null,
    tools.length
      ? h('ul', {}, ...tools.map((t) => h('li', { 'data-tool': t }, h('code', {}, t))))
      : null,
    s.skipped?.length ? h('small', {}, `skipped: ${s.skipped.join('; ')}`) : null,
  )
}

/** `POST /v1/sessions/:id/mcp` with an HTTP server; the server's answer as a sentence. */
async function addServer(client: HttpClient, name: string, url: string): Promise<string> {
  const response = await client.sessionRequest('POST', '/mcp', {
    name,
    config: { transport: 'http', url },
  })
  const body = (await response.json().catch(() => ({}))) as {
    tools?: string[]
    error?: { code?: string; message?: string }
  }
  if (response.ok) return `Added ${name}: ${body.tools?.length ?? 0} tools.`
  return `Refused (${response.status} ${body.error?.code ?? ''}): ${body.error?.message ?? ''}`
}

/**
 * MCP servers: the session's MCP servers (`GET /v1/sessions/:id/mcp`) and the tools each
 * publishes, and adding an HTTP one (`POST .../mcp`). Server mode; in this tab it says that it
 * needs a server.
 */
export function mcpPanel(): Panel {
  return {
    id: 'mcp',
    title: 'MCP servers',
    render(ctx: DemoContext) {
      const listHost = h('div', { id: 'mcp-list' })
      const name = h('input', { id: 'mcp-name', type: 'text', placeholder: 'docs' })
      const url = h('input', { id: 'mcp-url', type: 'url', placeholder: 'https://host/mcp' })
      const out = h('div', { id: 'mcp-result', 'aria-live': 'polite' })
      const server = ctx.client.mode === 'server'
      const { el, status } = capabilityLayout({
        id: 'mcp',
        title: 'MCP servers',
        intro:
          "Any MCP server's tools join the session as mcp__<server>__<tool>, governed like " +
          'built-in tools (a call asks unless the server marks the tool read-only and ' +
          'closed-world).',
        body: server
          ? [
              block('Servers of this session', listHost),
              block(
                'Add an HTTP server',
                field('Name', name),
                field(
                  'URL',
                  url,
                  'Private and loopback addresses are refused unless the server allows them.',
                ),
                h('button', { type: 'button', id: 'mcp-add', onclick: () => void add() }, 'Add'),
                out,
              ),
            ]
          : [],
      })
      if (!server) {
        say(
          status,
          note(
            'missing',
            'MCP servers need a server: run isoagent serve --mcp-config .mcp.json (or npm start) ' +
              'and open the URL it prints, then switch to Server.',
          ),
        )
        return el
      }
      const refresh = async () => {
        const answer = await sessionState(ctx.client).mcp()
        if (!answer.ok)
          return replace(listHost, note('missing', `${answer.code}: ${answer.message}`))
        const names = (await ctx.client.tools()).map((t) => t.name)
        replace(
          listHost,
          answer.value.length
            ? h(
                'ul',
                { class: 'mcp-servers' },
                ...answer.value.map((s) =>
                  serverView(
                    s,
                    names.filter((n) => n.startsWith(`mcp__${s.name}__`)),
                  ),
                ),
              )
            : note(
                'hint',
                'No MCP server in this session. Start the server with --mcp-config FILE ' +
                  '(.mcp.json), or add an HTTP one below.',
              ),
        )
      }
      const add = async () => {
        replace(out, note('info', 'Connecting…'))
        replace(out, note('info', await addServer(ctx.client as HttpClient, name.value, url.value)))
        // The tool console and the governance panel list the new server's tools.
        await ctx.refreshTools()
        await refresh()
      }
      void refresh()
      return el
    },
  }
}
