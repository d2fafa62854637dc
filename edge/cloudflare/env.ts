// The Worker's bindings and what it reads from them: token, limits, rules and the workspace.
import {
  Agent,
  IsoagentError,
  anthropic,
  checkMcpServers,
  parseMcpJson,
  memoryWorkspace,
  openAICompatible,
  openAICompatibleEmbeddings,
  workersAIEmbeddings,
  type EmbeddingModel,
  type LanguageModel,
  type McpServerConfig,
  type PermissionRules,
  type WorkersAIBinding,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { r2Workspace, type R2BucketLike } from '../../adapters/r2/index.ts'
import { s3Workspace } from '../../adapters/s3/index.ts'
import { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS } from '../http/session-store.ts'

/** The part of a Durable Object id the Worker passes around (opaque). */
export type DurableObjectIdLike = object

/** A Durable Object stub: requests to it reach the one object of its id. */
export interface DurableObjectStubLike {
  fetch(input: Request | string, init?: RequestInit): Promise<Response>
}

/** The part of a Durable Object namespace binding the Worker uses. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): DurableObjectIdLike
  get(id: DurableObjectIdLike): DurableObjectStubLike
}

/** The part of a Durable Object's storage the Worker uses. */
export interface DurableObjectStorageLike {
  get<T = unknown>(key: string): Promise<T | undefined>
  put(key: string, value: unknown): Promise<void>
  delete(key: string | string[]): Promise<boolean | number>
  list<T = unknown>(options?: { prefix?: string }): Promise<Map<string, T>>
  setAlarm(scheduledTime: number): Promise<void>
  deleteAlarm(): Promise<void>
}

/** What a Durable Object is constructed with (`DurableObjectState`). */
export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageLike
}

/**
 * The bindings of the isoagent Worker (`wrangler.toml`). Numbers and rules may be given as
 * strings (secrets, `.dev.vars`) or as JSON values (`[vars]`).
 */
export interface WorkerEnv {
  /** One Durable Object per session (class `IsoagentSession`). */
  SESSIONS: DurableObjectNamespaceLike
  /** The session counter behind `ISOAGENT_MAX_SESSIONS` (class `IsoagentRegistry`); optional. */
  REGISTRY?: DurableObjectNamespaceLike
  /** The bearer token (a secret). Unset or empty: every route but health answers 503. */
  ISOAGENT_TOKEN?: string
  /** Most sessions across all objects (default 64). */
  ISOAGENT_MAX_SESSIONS?: string | number
  /** Idle time (ms) after which a session is closed (default 15 min). */
  ISOAGENT_SESSION_IDLE_MS?: string | number
  /** Permission rules of every session: `{ allow?, ask?, deny?, defaultDecision? }` (JSON). */
  ISOAGENT_PERMISSIONS?: string | PermissionRules
  /**
   * `dynamic_workflow` in every session: `object` (journals in the session's Durable Object,
   * SQLite-backed) or `workspace` (`.a3s/workflow/<run_id>.jsonl` in the workspace); unset: off.
   */
  ISOAGENT_WORKFLOWS?: string
  /** An R2 bucket binding: the workspace (first choice). */
  BUCKET?: R2BucketLike
  /** Key prefix of the workspace inside `BUCKET`. */
  R2_PREFIX?: string
  /** S3 settings: the workspace when no `BUCKET` is bound. */
  S3_BUCKET?: string
  S3_ENDPOINT?: string
  S3_PREFIX?: string
  S3_REGION?: string
  S3_ACCESS_KEY_ID?: string
  S3_SECRET_ACCESS_KEY?: string
  /** The model of the agent loop (`POST /v1/sessions/:id/messages`, `task`): `openai` or `anthropic`. */
  MODEL_PROVIDER?: string
  /** The provider's base URL, e.g. `https://api.openai.com/v1` (required with MODEL_PROVIDER). */
  MODEL_BASE_URL?: string
  /** The provider's API key (a secret). */
  MODEL_API_KEY?: string
  /** The model id (required with MODEL_PROVIDER). */
  MODEL_NAME?: string
  /**
   * Semantic retrieval (`search` modes `semantic`, `hybrid`): an OpenAI-compatible embeddings
   * endpoint (`POST <EMBEDDINGS_URL>/embeddings`), like `isoagent serve --embeddings-url`.
   */
  EMBEDDINGS_URL?: string
  /** The embedding model: required with EMBEDDINGS_URL; with an `AI` binding, a Workers AI model. */
  EMBEDDINGS_MODEL?: string
  /** The endpoint's API key (a secret; EMBEDDINGS_URL only). */
  EMBEDDINGS_KEY?: string
  /** Vector length, sent and checked (optional). */
  EMBEDDINGS_DIMENSIONS?: string | number
  /**
   * A Workers AI binding (`[ai] binding = "AI"`): the embedder when EMBEDDINGS_MODEL is set and
   * EMBEDDINGS_URL is not. Bound alone it turns nothing on.
   */
  AI?: WorkersAIBinding
  /**
   * MCP servers every session connects (JSON): `{ name: { transport: "http", url, headers?,
   * oauth?, toolTimeoutMs?, enabled? } }`, or the `.mcp.json` form `{ "mcpServers": { name:
   * { type: "http", url, headers? } } }`. HTTP servers only (a Worker runs no processes); their
   * URLs are trusted (the deployer's own). At most {@link MCP_SERVERS_MAX_CHARS} characters.
   */
  MCP_SERVERS?: string | Record<string, unknown>
}

/** What the Worker serves with, read from its bindings. */
export interface WorkerSettings {
  token: string
  maxSessions: number
  sessionIdleMs: number
  permissions?: PermissionRules
  /** `r2`, `s3` or `memory` (memory: one workspace per session, inside its object). */
  workspaceKind: 'r2' | 's3' | 'memory'
  /** The embedder of semantic retrieval ({@link embeddingsFromEnv}), if any. */
  embeddings?: EmbeddingModel
  /** The MCP servers of `MCP_SERVERS` (every session connects them). */
  mcpServers?: Record<string, McpServerConfig>
  /** Where `dynamic_workflow` journals runs (`ISOAGENT_WORKFLOWS`); absent: no such tool. */
  workflows?: 'object' | 'workspace'
}

/** A binding that makes no sense: the Worker answers 503 `not_configured` with this message. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

const positive = (value: string | number | undefined, name: string, fallback: number) => {
  if (value === undefined || value === '') return fallback
  const n = typeof value === 'number' ? value : Number(value)
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(`${name} must be a positive integer`)
  return n
}

const RULE_KEYS = new Set(['allow', 'ask', 'deny', 'defaultDecision'])

function permissionsOf(value: WorkerEnv['ISOAGENT_PERMISSIONS']): PermissionRules | undefined {
  if (value === undefined || value === '') return undefined
  let rules: unknown = value
  if (typeof value === 'string') {
    try {
      rules = JSON.parse(value)
    } catch {
      throw new ConfigError('ISOAGENT_PERMISSIONS must be JSON: { "allow": [...], "ask": [...] }')
    }
  }
  const ok =
    typeof rules === 'object' &&
    rules !== null &&
    !Array.isArray(rules) &&
    Object.entries(rules).every(([k, v]) =>
      k === 'defaultDecision'
        ? v === 'allow' || v === 'ask' || v === 'deny'
        : RULE_KEYS.has(k) && Array.isArray(v) && v.every((r) => typeof r === 'string'),
    )
  if (!ok)
    throw new ConfigError(
      'ISOAGENT_PERMISSIONS must be { allow?, ask?, deny?: string[], defaultDecision? }',
    )
  return rules as PermissionRules
}

/** Longest `MCP_SERVERS` binding read (a larger one is refused as a configuration error). */
export const MCP_SERVERS_MAX_CHARS = 64 * 1024

/** The servers of `MCP_SERVERS` (checked; HTTP only), or undefined; throws {@link ConfigError}. */
export function mcpServersFromEnv(
  value: WorkerEnv['MCP_SERVERS'],
): Record<string, McpServerConfig> | undefined {
  if (value === undefined || value === '') return undefined
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  if (text.length > MCP_SERVERS_MAX_CHARS)
    throw new ConfigError(`MCP_SERVERS is longer than ${MCP_SERVERS_MAX_CHARS} characters`)
  let servers: unknown
  try {
    const parsed: unknown = JSON.parse(text)
    servers =
      typeof parsed === 'object' && parsed !== null && 'mcpServers' in parsed
        ? parseMcpJson(text)
        : parsed
    checkMcpServers(servers)
  } catch (error) {
    const why = error instanceof SyntaxError ? 'it is not valid JSON' : (error as Error).message
    throw new ConfigError(`MCP_SERVERS must be JSON { name: { transport: "http", url } }: ${why}`)
  }
  if (servers === undefined) return undefined
  for (const [name, config] of Object.entries(servers))
    if (config.transport !== 'http')
      throw new ConfigError(
        `MCP_SERVERS.${name}: only HTTP servers run on Workers (a Worker starts no processes)`,
      )
  return Object.keys(servers).length > 0 ? servers : undefined
}

/** Read the settings; throws {@link ConfigError} on a bad or missing binding. */
export function workerSettings(env: WorkerEnv): WorkerSettings {
  const token = env.ISOAGENT_TOKEN ?? ''
  if (token === '')
    throw new ConfigError(
      'ISOAGENT_TOKEN is not set: set the secret (wrangler secret put ISOAGENT_TOKEN) to serve',
    )
  if (env.SESSIONS === undefined)
    throw new ConfigError('the Durable Object binding SESSIONS (class IsoagentSession) is missing')
  const permissions = permissionsOf(env.ISOAGENT_PERMISSIONS)
  const embeddings = embeddingsFromEnv(env)
  const mcpServers = mcpServersFromEnv(env.MCP_SERVERS)
  const workflows = env.ISOAGENT_WORKFLOWS ?? ''
  if (workflows !== '' && workflows !== 'object' && workflows !== 'workspace')
    throw new ConfigError('ISOAGENT_WORKFLOWS must be "object" or "workspace" (or unset)')
  return {
    token,
    maxSessions: positive(env.ISOAGENT_MAX_SESSIONS, 'ISOAGENT_MAX_SESSIONS', DEFAULT_MAX_SESSIONS),
    sessionIdleMs: positive(
      env.ISOAGENT_SESSION_IDLE_MS,
      'ISOAGENT_SESSION_IDLE_MS',
      DEFAULT_SESSION_IDLE_MS,
    ),
    ...(permissions ? { permissions } : {}),
    workspaceKind: env.BUCKET !== undefined ? 'r2' : env.S3_BUCKET ? 's3' : 'memory',
    ...(embeddings ? { embeddings } : {}),
    ...(mcpServers ? { mcpServers } : {}),
    ...(workflows !== '' ? { workflows } : {}),
  }
}

/**
 * The embedder of semantic retrieval: `EMBEDDINGS_URL` + `EMBEDDINGS_MODEL` (+ `EMBEDDINGS_KEY`)
 * name an OpenAI-compatible endpoint; else `EMBEDDINGS_MODEL` with an `AI` binding names a
 * Workers AI model; none when EMBEDDINGS_MODEL and EMBEDDINGS_URL are unset. Throws
 * {@link ConfigError} for incomplete or bad settings.
 */
export function embeddingsFromEnv(env: WorkerEnv): EmbeddingModel | undefined {
  const url = env.EMBEDDINGS_URL ?? ''
  const model = env.EMBEDDINGS_MODEL ?? ''
  if (url === '' && model === '') return undefined
  const dimension =
    env.EMBEDDINGS_DIMENSIONS === undefined || env.EMBEDDINGS_DIMENSIONS === ''
      ? undefined
      : positive(env.EMBEDDINGS_DIMENSIONS, 'EMBEDDINGS_DIMENSIONS', 0)
  try {
    if (url !== '') {
      if (model === '') throw new ConfigError('EMBEDDINGS_URL is set but EMBEDDINGS_MODEL is not')
      return openAICompatibleEmbeddings({
        baseURL: url,
        model,
        ...(env.EMBEDDINGS_KEY ? { apiKey: env.EMBEDDINGS_KEY } : {}),
        ...(dimension !== undefined ? { dimensions: dimension } : {}),
      })
    }
    if (env.AI === undefined)
      throw new ConfigError(
        'EMBEDDINGS_MODEL is set but neither EMBEDDINGS_URL nor an AI binding ([ai] binding = "AI")',
      )
    return workersAIEmbeddings({
      binding: env.AI,
      model,
      ...(dimension !== undefined ? { dimension } : {}),
    })
  } catch (error) {
    if (error instanceof ConfigError) throw error
    throw new ConfigError(
      `the EMBEDDINGS_* settings are invalid: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

/**
 * The model named by `MODEL_PROVIDER` (`openai`: any OpenAI-compatible chat completions endpoint;
 * `anthropic`), `MODEL_BASE_URL`, `MODEL_API_KEY` and `MODEL_NAME`; none when MODEL_PROVIDER is
 * unset. Throws {@link ConfigError} for incomplete or bad settings.
 */
export function modelFromEnv(env: WorkerEnv): LanguageModel | undefined {
  const provider = env.MODEL_PROVIDER ?? ''
  if (provider === '') return undefined
  if (provider !== 'openai' && provider !== 'anthropic')
    throw new ConfigError('MODEL_PROVIDER must be "openai" or "anthropic"')
  if (!env.MODEL_BASE_URL || !env.MODEL_NAME)
    throw new ConfigError('MODEL_PROVIDER is set but MODEL_BASE_URL or MODEL_NAME is not')
  const options = {
    baseURL: env.MODEL_BASE_URL,
    model: env.MODEL_NAME,
    ...(env.MODEL_API_KEY ? { apiKey: env.MODEL_API_KEY } : {}),
  }
  try {
    return provider === 'openai' ? openAICompatible(options) : anthropic(options)
  } catch (error) {
    throw new ConfigError(
      `the MODEL_* settings are invalid: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

/**
 * The agent of the Worker's sessions: with the model of {@link modelFromEnv}, if any, and the
 * MCP servers of `MCP_SERVERS` (each session connects them in its own object).
 */
export function agentFromEnv(env: WorkerEnv): Agent {
  const model = modelFromEnv(env)
  const mcpServers = mcpServersFromEnv(env.MCP_SERVERS)
  return Agent.create({ ...(model ? { model } : {}), ...(mcpServers ? { mcpServers } : {}) })
}

/**
 * The workspace of a new session: the R2 binding `BUCKET`, else the S3 settings, else a fresh
 * memory workspace (which then lives and dies with its session's object).
 */
export function workspaceFromEnv(env: WorkerEnv): WorkspaceServices {
  if (env.BUCKET !== undefined)
    return r2Workspace(env.BUCKET, env.R2_PREFIX ? { prefix: env.R2_PREFIX } : {})
  if (env.S3_BUCKET) {
    if (!env.S3_ACCESS_KEY_ID || !env.S3_SECRET_ACCESS_KEY)
      throw new IsoagentError(
        'invalid_argument',
        'S3_BUCKET is set but S3_ACCESS_KEY_ID or S3_SECRET_ACCESS_KEY is not (a Worker has no other credentials)',
      )
    const endpoint = env.S3_ENDPOINT || undefined
    return s3Workspace({
      bucket: env.S3_BUCKET,
      ...(env.S3_PREFIX ? { prefix: env.S3_PREFIX } : {}),
      clientConfig: {
        region: env.S3_REGION || (endpoint ? 'auto' : 'us-east-1'),
        ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
        credentials: {
          accessKeyId: env.S3_ACCESS_KEY_ID,
          secretAccessKey: env.S3_SECRET_ACCESS_KEY,
        },
        // workerd's fetch streams no aws-chunked bodies; checksums only where S3 demands them.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      },
    })
  }
  return memoryWorkspace()
}
