import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  ErrorCode,
  ListResourcesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js'
import { stringify } from 'yaml'
import { IsoagentError, SKILL_LIMITS, type Session, type SkillEntry } from '../../adapters/index.ts'

/** The URI scheme of skill resources: `skill://<name>/SKILL.md` and `skill://<name>/<file>`. */
export const SKILL_URI_SCHEME = 'skill://'

type WorkspaceRead = Session['workspace']['read']
type ReadPath = Parameters<WorkspaceRead>[0]

const strict = new TextDecoder('utf-8', { fatal: true })
/** Largest file served as a skill resource (a SKILL.md is bounded lower, by its own limit). */
export const MAX_SKILL_RESOURCE_BYTES = 8 * 1024 * 1024

/** At most `max` bytes of `path`; an MCP error naming `uri` when the file is larger. */
async function readBounded(
  session: Session,
  path: string,
  uri: string,
  max: number,
): Promise<Uint8Array> {
  const bytes = await session.workspace.read(path as ReadPath, { offset: 0, length: max + 1 })
  if (bytes.length > max)
    throw new McpError(ErrorCode.InvalidParams, `Resource too large (over ${max} bytes): ${uri}`, {
      uri,
    })
  return bytes
}

const MIME_BY_EXTENSION: Record<string, string> = {
  md: 'text/markdown',
  txt: 'text/plain',
  json: 'application/json',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  js: 'text/javascript',
  ts: 'text/typescript',
  html: 'text/html',
  yaml: 'application/yaml',
  yml: 'application/yaml',
}

function mimeOf(path: string): string | undefined {
  const dot = path.lastIndexOf('.')
  return dot < 0 ? undefined : MIME_BY_EXTENSION[path.slice(dot + 1).toLowerCase()]
}

const skillUri = (name: string, relative: string) =>
  SKILL_URI_SCHEME + name + '/' + relative.split('/').map(encodeURIComponent).join('/')

/** The folder a `dir/SKILL.md` skill's bundled files are relative to (workspace skills only). */
function folderOf(entry: SkillEntry): string | undefined {
  if (entry.source.kind !== 'workspace') return undefined
  const path = entry.source.path
  const slash = path.lastIndexOf('/')
  return slash < 0 ? '' : path.slice(0, slash)
}

/** Reads at most `max` bytes of one bundled file; an MCP error naming `uri` when larger. */
type BundledRead = (session: Session, uri: string, max: number) => Promise<Uint8Array>

/**
 * The bundled files of a skill: [relative path, reader]. A workspace skill's are read through
 * the session's workspace; a host skill's (listed as `skill://<name>/<file>`) through its entry's
 * `readFile`, which keeps to the skill's folder.
 */
async function bundled(entry: SkillEntry): Promise<[string, BundledRead][]> {
  const folder = folderOf(entry)
  if (folder === undefined) return hostBundled(entry)
  const { files } = await entry.loadBody()
  const prefix = folder === '' ? '' : folder + '/'
  return files
    .filter((f) => f.startsWith(prefix))
    .map((f) => [f.slice(prefix.length), (session, uri, max) => readBounded(session, f, uri, max)])
}

async function hostBundled(entry: SkillEntry): Promise<[string, BundledRead][]> {
  const readFile = entry.readFile?.bind(entry)
  if (entry.source.kind !== 'host' || readFile === undefined) return []
  const { files } = await entry.loadBody()
  const own = SKILL_URI_SCHEME + entry.skill.name + '/'
  return files
    .filter((f) => f.startsWith(own))
    .map((f) => parseSkillUri(f)?.relative)
    .filter((relative): relative is string => relative !== undefined)
    .map((relative) => [
      relative,
      async (_session, uri, max) => {
        try {
          return await readFile(relative, max)
        } catch (error) {
          if (IsoagentError.is(error, 'too_large'))
            throw new McpError(
              ErrorCode.InvalidParams,
              `Resource too large (over ${max} bytes): ${uri}`,
              { uri },
            )
          throw notFound(uri)
        }
      },
    ])
}

/** The front matter a skill given in code would have in a SKILL.md. */
function frontMatter(entry: SkillEntry): Record<string, unknown> {
  const s = entry.skill
  const fields: Record<string, unknown> = {
    name: s.name,
    description: s.description,
    'allowed-tools': s.allowedTools,
    'disable-model-invocation': s.disableModelInvocation,
    kind: s.kind,
    tags: s.tags,
    version: s.version,
    license: s.license,
    compatibility: s.compatibility,
    metadata: s.metadata,
  }
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined))
}

/** A skill's SKILL.md: the workspace file's own text, else front matter + the loaded body. */
async function skillText(session: Session, entry: SkillEntry, uri: string): Promise<string> {
  if (entry.source.kind === 'workspace') {
    const bytes = await readBounded(session, entry.source.path, uri, SKILL_LIMITS.maxFileBytes)
    return new TextDecoder().decode(bytes)
  }
  const { body } = await entry.loadBody()
  return `---\n${stringify(frontMatter(entry))}---\n\n${body}`
}

/** The `resources/list` entries of every skill of `session`: SKILL.md, then its files. */
export async function listSkillResources(session: Session): Promise<Resource[]> {
  const resources: Resource[] = []
  for (const listed of session.skills().skills) {
    const entry = session.skill(listed.name)
    if (entry === undefined) continue
    resources.push({
      uri: skillUri(listed.name, 'SKILL.md'),
      name: `${listed.name}/SKILL.md`,
      description: listed.description,
      mimeType: 'text/markdown',
    })
    for (const [relative] of await bundled(entry)) {
      const mimeType = mimeOf(relative)
      resources.push({
        uri: skillUri(listed.name, relative),
        name: `${listed.name}/${relative}`,
        ...(mimeType !== undefined ? { mimeType } : {}),
      })
    }
  }
  return resources
}

function notFound(uri: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri })
}

/** Split `skill://<name>/<relative>` into its name and decoded relative path. */
function parseSkillUri(uri: string): { name: string; relative: string } | undefined {
  if (!uri.startsWith(SKILL_URI_SCHEME)) return undefined
  const rest = uri.slice(SKILL_URI_SCHEME.length)
  const slash = rest.indexOf('/')
  if (slash <= 0) return undefined
  try {
    const relative = rest
      .slice(slash + 1)
      .split('/')
      .map((s) => decodeURIComponent(s))
      .join('/')
    return { name: rest.slice(0, slash), relative }
  } catch {
    return undefined
  }
}

/** The contents of one skill resource; an MCP error for a URI that names none. */
export async function readSkillResource(
  session: Session,
  uri: string,
): Promise<ReadResourceResult> {
  const parsed = parseSkillUri(uri)
  const entry = parsed === undefined ? undefined : session.skill(parsed.name)
  if (parsed === undefined || entry === undefined) throw notFound(uri)
  if (parsed.relative === 'SKILL.md')
    return {
      contents: [{ uri, mimeType: 'text/markdown', text: await skillText(session, entry, uri) }],
    }
  // Only a file the skill bundles (listed by its registry entry) is served: no path escapes.
  const file = (await bundled(entry)).find(([relative]) => relative === parsed.relative)
  if (file === undefined) throw notFound(uri)
  const bytes = await file[1](session, uri, MAX_SKILL_RESOURCE_BYTES)
  const mimeType = mimeOf(parsed.relative)
  const typed = mimeType !== undefined ? { mimeType } : {}
  try {
    return { contents: [{ uri, ...typed, text: strict.decode(bytes) }] }
  } catch {
    return { contents: [{ uri, ...typed, blob: base64(bytes) }] }
  }
}

function base64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/**
 * Send `notifications/resources/list_changed` whenever the session's skills change, while the
 * server is open (several changes in one turn of the event loop send one notification).
 */
function notifyListChanges(server: Server, session: Session): void {
  let queued = false
  const stop = session.onSkillsChange(() => {
    if (queued) return
    queued = true
    queueMicrotask(() => {
      queued = false
      if (server.transport === undefined) return
      server.sendResourceListChanged().catch(() => undefined)
    })
  })
  const previous = server.onclose
  server.onclose = () => {
    stop()
    previous?.()
  }
}

/**
 * Serve the session's skills as MCP resources (MCP's skills extension): `resources/list` lists
 * `skill://<name>/SKILL.md` per skill and `skill://<name>/<path>` per bundled file;
 * `resources/read` returns their text (binary files as base64 `blob`). It declares the
 * `resources` capability with `listChanged` (before the server connects) and sends
 * `notifications/resources/list_changed` when a skill is added or removed.
 */
export function serveSkillResources(server: Server, session: Session): void {
  server.registerCapabilities({ resources: { listChanged: true } })
  notifyListChanges(server, session)
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: await listSkillResources(session),
  }))
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    readSkillResource(session, request.params.uri),
  )
}
