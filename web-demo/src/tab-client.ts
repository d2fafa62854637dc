import LightningFS from '@isomorphic-git/lightning-fs'
import {
  Agent,
  WorkspacePath,
  browserWorkspace,
  openAICompatibleEmbeddings,
  type AgentEvent,
  type LanguageModel,
  type Session,
  type SessionEvent,
  type ToolDefinition,
  type ToolResult,
  type WorkspaceServices,
} from '../../adapters/browser/index.ts'
import { loadEmbeddingsSettings } from './embeddings-settings.ts'
import { clearWorkspace, isEmptyWorkspace, writeSample } from './sample/sample-project.ts'
import type { PendingConfirmation, ToolClient } from './tool-client.ts'

/** The IndexedDB database (lightning-fs name) of the in-tab workspace. */
export const TAB_WORKSPACE_NAME = 'isoagent-demo'

/**
 * Rules of the in-tab session: writing under `private/` asks first (to show the dialog), writing
 * under `secrets/` is refused (to show a denial).
 */
export const TAB_PERMISSIONS = {
  ask: ['write(private/**)', 'edit(private/**)', 'patch(private/**)'],
  deny: ['write(secrets/**)', 'edit(secrets/**)', 'patch(secrets/**)'],
}

/** Options of every in-tab session: the rules, and `dynamic_workflow` (journal in the workspace). */
export const TAB_SESSION_OPTIONS = { permissions: TAB_PERMISSIONS, workflows: {} }

/**
 * The options of a new in-tab session: {@link TAB_SESSION_OPTIONS}, plus semantic retrieval when
 * the user gave an embeddings endpoint in this tab (the semantic search panel); settings the
 * client refuses leave it out (the panel then says that no provider is configured).
 */
function tabSessionOptions() {
  const e = loadEmbeddingsSettings()
  if (!e) return TAB_SESSION_OPTIONS
  try {
    const embeddings = openAICompatibleEmbeddings({
      baseURL: e.baseURL,
      model: e.model,
      ...(e.apiKey ? { apiKey: e.apiKey } : {}),
    })
    return { ...TAB_SESSION_OPTIONS, retrieval: { embeddings } }
  } catch {
    return TAB_SESSION_OPTIONS
  }
}

const READ_ONLY = new Set(['read', 'ls', 'search'])

/** A file to put into the workspace: its relative path and its bytes. */
export interface ImportedFile {
  path: string
  bytes: Uint8Array
}

/**
 * The in-tab client: a session over a `browserWorkspace` in this tab's IndexedDB. Every tool
 * runs in the page (QuickJS and isomorphic-git load on the first call that needs them); nothing
 * is sent anywhere.
 */
export class TabClient implements ToolClient {
  readonly mode = 'tab' as const
  readonly description = `this tab (IndexedDB "${TAB_WORKSPACE_NAME}")`
  private readonly listeners = new Set<(event: SessionEvent) => void>()
  private readonly stop = new AbortController()
  /** The session the chat drives: one more session over the same file system, with a model. */
  private chat: { session: Session; stop: AbortController } | undefined

  private constructor(
    private readonly lfs: LightningFS,
    /** The panels' session (the governance and capability panels read its state). */
    readonly session: Session,
    /** The workspace port, for importing and exporting files (host-side, no tool call). */
    readonly workspace: WorkspaceServices,
  ) {
    void this.pump()
  }

  static async open(): Promise<TabClient> {
    const lfs = new LightningFS(TAB_WORKSPACE_NAME)
    const workspace = browserWorkspace({ name: TAB_WORKSPACE_NAME, fs: lfs })
    const session = await Agent.create().session(workspace, tabSessionOptions())
    return new TabClient(lfs, session, workspace)
  }

  private async pump(session = this.session, signal = this.stop.signal): Promise<void> {
    for await (const event of session.events({ signal }))
      for (const listener of this.listeners) listener(event)
  }

  /**
   * Give the chat `model`: a session of an `Agent` with that model, over the same lightning-fs
   * (same rules), replacing the chat's previous one (and its conversation). Its events reach the
   * same listeners as the panels' session, so its tool calls show in the timeline.
   */
  async useModel(model: LanguageModel): Promise<void> {
    await this.closeChat()
    const workspace = browserWorkspace({ name: TAB_WORKSPACE_NAME, fs: this.lfs })
    const session = await Agent.create({ model }).session(workspace, tabSessionOptions())
    const stop = new AbortController()
    this.chat = { session, stop }
    void this.pump(session, stop.signal)
  }

  /** One agent turn of the chat session (see `useModel`); its file writes are saved after. */
  async *stream(prompt: string, signal: AbortSignal): AsyncGenerator<AgentEvent> {
    if (!this.chat) throw new Error('no model: call useModel first')
    try {
      yield* this.chat.session.stream(prompt, { signal })
    } finally {
      await this.saveTree()
    }
  }

  private async closeChat(): Promise<void> {
    const chat = this.chat
    this.chat = undefined
    chat?.stop.abort()
    await chat?.session.close()
  }

  private sessions(): Session[] {
    return this.chat ? [this.session, this.chat.session] : [this.session]
  }

  async tools(): Promise<ToolDefinition[]> {
    return this.session.toolDefinitions()
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const result = await this.session.governedTool(name, args)
    if (!READ_ONLY.has(name)) await this.saveTree()
    return result
  }

  /**
   * Save lightning-fs's tree now. The workspace's own writes save it before they return, but
   * `git` writes through the file system directly, whose changes lightning-fs saves only 500 ms
   * later: a reload before that would lose them.
   */
  private async saveTree(): Promise<void> {
    await this.lfs.promises.flush().catch(() => undefined)
  }

  onEvent(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async pendingConfirmations(): Promise<PendingConfirmation[]> {
    return this.sessions()
      .flatMap((s) => s.pendingConfirmations())
      .map((p) => ({
        id: p.id,
        callId: p.callId,
        toolName: p.toolName,
        args: p.args,
      }))
  }

  async confirm(key: string, approved: boolean): Promise<void> {
    for (const session of this.sessions()) {
      const pending = session.pendingConfirmations().find((p) => p.id === key || p.callId === key)
      if (pending) return session.confirmToolUse(pending.id, approved)
    }
    this.session.confirmToolUse(key, approved)
  }

  /** Write files straight into the workspace (parents created); returns how many were written. */
  async importFiles(files: ImportedFile[], onProgress?: (done: number) => void): Promise<number> {
    let done = 0
    for (const file of files) {
      await this.workspace.write(WorkspacePath.parse(file.path), file.bytes)
      onProgress?.(++done)
    }
    await this.saveTree()
    return done
  }

  /**
   * On a first visit (the workspace root is empty), write the sample project `npm start` serves,
   * with its `.git`; returns whether it did. A workspace with anything in it is left as it is.
   */
  async seedIfEmpty(): Promise<boolean> {
    if (!(await isEmptyWorkspace(this.workspace))) return false
    await writeSample(this.workspace)
    await this.saveTree()
    return true
  }

  /** "Reset sample": remove every file of the workspace (`.git` too), then write the sample. */
  async resetSample(): Promise<number> {
    await clearWorkspace(this.workspace)
    const n = await writeSample(this.workspace)
    await this.saveTree()
    return n
  }

  /** Every file of the workspace (`.git` left out unless asked), depth first, by name. */
  async exportFiles(options: { includeGit?: boolean } = {}): Promise<ImportedFile[]> {
    const out: ImportedFile[] = []
    const walk = async (dir: string): Promise<void> => {
      let after: string | undefined
      do {
        const page = await this.workspace.list(WorkspacePath.parse(dir), after ? { after } : {})
        for (const entry of page.entries) {
          const path = dir === '' ? entry.name : `${dir}/${entry.name}`
          if (entry.kind === 'directory') {
            if (path === '.git' && !options.includeGit) continue
            await walk(path)
          } else if (entry.kind === 'file') {
            out.push({ path, bytes: await this.workspace.read(WorkspacePath.parse(path)) })
          }
        }
        after = page.next
      } while (after !== undefined)
    }
    await walk('')
    return out
  }

  async close(): Promise<void> {
    this.stop.abort()
    await this.closeChat()
    await this.session.close()
  }
}
