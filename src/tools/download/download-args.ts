import type { JsonSchema } from '../../kernel/tool-spec.ts'

const MiB = 1024 * 1024
/** Limits of `download`. */
export const DOWNLOAD_LIMITS = {
  maxBytes: { default: 512 * MiB, max: 8 * 1024 * MiB },
  timeoutS: { default: 300, max: 3600 },
  connections: { default: 4, max: 4 },
  /** Smallest range of a parallel download. */
  minChunkBytes: 2 * MiB,
  /** Largest range one request of a parallel download asks for. */
  maxChunkBytes: 32 * MiB,
  /** Retries of one request (statuses 408, 429, 5xx and I/O failures). */
  retries: 3,
  /** Least time between two progress events. */
  progressMs: 250,
} as const

/** Arguments of `download`. */
export interface DownloadArgs {
  url: string
  file_path: string
  overwrite?: boolean
  connections?: number
  max_bytes?: number
  timeout?: number
  expected_sha256?: string
}

/** What the model reads about `download`. */
export const DOWNLOAD_DESCRIPTION =
  'Download a public http(s) URL to a file in the workspace, streaming to a temp file beside the target ' +
  'and moving it into place only when complete (nothing is left behind on failure). Uses up to 4 parallel ' +
  'range requests when the server supports them with a strong ETag. `file_path` ending in "/" picks the name ' +
  'from Content-Disposition or the URL. Fails if the file exists unless `overwrite` is true.'

/** The JSON Schema of {@link DownloadArgs}. */
export const DOWNLOAD_PARAMETERS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'file_path'],
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 8192,
      description: 'http(s) URL to download.',
    },
    file_path: {
      type: 'string',
      minLength: 1,
      description:
        'Target file (relative to the workspace root); ending in "/" = into that directory.',
    },
    overwrite: { type: 'boolean', description: 'Replace an existing file (default false).' },
    connections: {
      type: 'integer',
      minimum: 1,
      maximum: DOWNLOAD_LIMITS.connections.max,
      description: `Parallel range requests, 1..4 (default ${DOWNLOAD_LIMITS.connections.default}).`,
    },
    max_bytes: {
      type: 'integer',
      minimum: 1,
      maximum: DOWNLOAD_LIMITS.maxBytes.max,
      description: 'Largest download accepted (default 512 MiB, max 8 GiB).',
    },
    timeout: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: DOWNLOAD_LIMITS.timeoutS.max,
      description: 'Seconds for the whole download (default 300, max 3600).',
    },
    expected_sha256: {
      type: 'string',
      pattern: '^[0-9a-fA-F]{64}$',
      description: 'SHA-256 (64 hex digits) the content must have; otherwise nothing is written.',
    },
  },
}
