import type {
  McpServerStatus,
  PermissionRules,
  RetrievalStatus,
  SkillsReport,
} from '../../../adapters/browser/index.ts'
import type { HttpClient } from '../http-client.ts'
import type { TabClient } from '../tab-client.ts'
import type { ToolClient } from '../tool-client.ts'

/** An answer the session gave, or why there is none (the server's error code and message). */
export type Answer<T> = { ok: true; value: T } | { ok: false; code: string; message: string }

/**
 * What the capability panels read of a session besides its tools: its rules, an artifact,
 * its skills, MCP servers and retrieval status. In "this tab" mode straight from the session;
 * in server mode over the HTTP routes of `docs/http.md` (`/snapshot`, `/artifacts`, `/skills`,
 * `/mcp`, `/retrieval`).
 */
export interface SessionState {
  /** The session's permission rules (as its snapshot holds them). */
  permissions(): Promise<Answer<PermissionRules>>
  /** The full original of a projected result (`a3s://tool-output/...`). */
  artifact(uri: string): Promise<Answer<Uint8Array>>
  skills(): Promise<Answer<SkillsReport>>
  /** MCP servers: a tab has none of its own (a browser page cannot spawn or host one here). */
  mcp(): Promise<Answer<McpServerStatus[]>>
  retrieval(): Promise<Answer<RetrievalStatus>>
}

const ok = <T>(value: T): Answer<T> => ({ ok: true, value })
const no = <T>(code: string, message: string): Answer<T> => ({ ok: false, code, message })

/** The state of the tab's own session. */
function tabState(client: TabClient): SessionState {
  const session = client.session
  return {
    permissions: async () => ok(session.snapshot().permissions),
    artifact: async (uri) => {
      const bytes = await session.getArtifact(uri)
      return bytes ? ok(bytes) : no('artifact_not_found', 'no artifact with this URI is held')
    },
    skills: async () => ok(session.skills()),
    mcp: async () => ok(session.mcpStatus()),
    retrieval: async () => {
      const status = session.retrievalStatus()
      return status
        ? ok(status)
        : no('retrieval_not_configured', 'this session did not enable semantic retrieval')
    },
  }
}

/** Read one session route of the server; a 4xx/5xx becomes its `{ error: { code, message } }`. */
async function fetchAnswer<T>(
  client: HttpClient,
  rest: string,
  read: (r: Response) => Promise<T>,
): Promise<Answer<T>> {
  try {
    const response = await client.sessionRequest('GET', rest)
    if (response.ok) return ok(await read(response))
    const body = (await response.json().catch(() => ({}))) as {
      error?: { code?: string; message?: string }
    }
    return no(
      body.error?.code ?? `http_${response.status}`,
      body.error?.message ?? response.statusText,
    )
  } catch (error) {
    return no('transport', `the server could not be reached: ${(error as Error).message}`)
  }
}

/** The state of the server's session, over its HTTP routes. */
function serverState(client: HttpClient): SessionState {
  const json = <T>(r: Response) => r.json() as Promise<T>
  return {
    permissions: async () => {
      const snap = await fetchAnswer(client, '/snapshot', json<{ permissions: PermissionRules }>)
      return snap.ok ? ok(snap.value.permissions) : snap
    },
    artifact: (uri) =>
      fetchAnswer(
        client,
        `/artifacts?uri=${encodeURIComponent(uri)}`,
        async (r) => new Uint8Array(await r.arrayBuffer()),
      ),
    skills: () => fetchAnswer(client, '/skills', json<SkillsReport>),
    mcp: () => fetchAnswer(client, '/mcp', json<McpServerStatus[]>),
    retrieval: () => fetchAnswer(client, '/retrieval', json<RetrievalStatus>),
  }
}

/** The state reader for `client`'s session, whichever mode it is. */
export function sessionState(client: ToolClient): SessionState {
  return client.mode === 'tab' ? tabState(client as TabClient) : serverState(client as HttpClient)
}
