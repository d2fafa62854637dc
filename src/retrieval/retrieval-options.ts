import { IsoagentError } from '../errors.ts'
import { checkEmbeddingModel, type EmbeddingModel } from './embedding-model.ts'
import { defaultSymbolExtractor, type SymbolExtractor } from './symbol-extractor.ts'

/** Caps of a session's index and of its embedding calls. */
export interface RetrievalLimits {
  /** Eligible files indexed at most (default 50,000). */
  maxFiles: number
  /** Chunks indexed at most (default 100,000); a file that would pass it fails alone. */
  maxChunks: number
  /** Text bytes indexed at most (default 64 MiB); a file that would pass it fails alone. */
  maxTextBytes: number
  /** Inputs per embedding call (default 64, at most 64). */
  batchInputs: number
  /** Text bytes per embedding call (default 256 KiB, at most 256 KiB). */
  batchBytes: number
  /** Deadline of one embedding call in ms (default 30,000). */
  embedTimeoutMs: number
  /** First retry delay in ms, doubled per retry, when the embedder names none (default 250). */
  retryDelayMs: number
}

/** `SessionOptions.retrieval`: semantic retrieval for the `search` tool. */
export interface RetrievalOptions {
  embeddings: EmbeddingModel
  /**
   * How long a `semantic`/`hybrid` search waits for the index to finish building (ms; default
   * 0 = answer at once from what is indexed, with `fallback: building`; at most 30,000).
   */
  readinessTimeoutMs?: number
  limits?: Partial<RetrievalLimits>
  /**
   * **Beyond the reference.** The parser of hybrid's symbol channel: a {@link SymbolExtractor}
   * (e.g. `treeSitterSymbols(...)`), or `false` for the regex only. Default: the runtime's (Node
   * wires tree-sitter; elsewhere none, so the regex).
   */
  symbols?: SymbolExtractor | false
}

/** Defaults of {@link RetrievalLimits}. */
export const RETRIEVAL_DEFAULTS: RetrievalLimits = {
  maxFiles: 50_000,
  maxChunks: 100_000,
  maxTextBytes: 64 * 1024 * 1024,
  batchInputs: 64,
  batchBytes: 256 * 1024,
  embedTimeoutMs: 30_000,
  retryDelayMs: 250,
}

const MAX: Partial<Record<keyof RetrievalLimits, number>> = {
  batchInputs: 64,
  batchBytes: 256 * 1024,
}

/** Validates `SessionOptions.retrieval` and fills in the defaults (throws `invalid_argument`). */
export function resolveRetrievalOptions(options: RetrievalOptions): {
  embeddings: EmbeddingModel
  readinessTimeoutMs: number
  limits: RetrievalLimits
  symbols: SymbolExtractor | undefined
} {
  if (typeof options !== 'object' || options === null)
    throw new IsoagentError('invalid_argument', 'retrieval must be an object')
  for (const key of Object.keys(options))
    if (!['embeddings', 'readinessTimeoutMs', 'limits', 'symbols'].includes(key))
      throw new IsoagentError('invalid_argument', `retrieval: unknown field "${key}"`)
  checkEmbeddingModel(options.embeddings)
  const wait = options.readinessTimeoutMs ?? 0
  if (!Number.isInteger(wait) || wait < 0 || wait > 30_000)
    throw new IsoagentError('invalid_argument', 'retrieval.readinessTimeoutMs must be 0..30000')
  const limits = { ...RETRIEVAL_DEFAULTS }
  for (const [key, value] of Object.entries(options.limits ?? {})) {
    if (!(key in RETRIEVAL_DEFAULTS))
      throw new IsoagentError('invalid_argument', `retrieval.limits: unknown field "${key}"`)
    const k = key as keyof RetrievalLimits
    const max = MAX[k] ?? Number.MAX_SAFE_INTEGER
    if (
      !Number.isInteger(value) ||
      (value as number) < (k === 'retryDelayMs' ? 0 : 1) ||
      (value as number) > max
    )
      throw new IsoagentError(
        'invalid_argument',
        `retrieval.limits.${key} must be an integer 1..${max}`,
      )
    limits[k] = value as number
  }
  return {
    embeddings: options.embeddings,
    readinessTimeoutMs: wait,
    limits,
    symbols: symbolsOf(options.symbols),
  }
}

function symbolsOf(symbols: RetrievalOptions['symbols']): SymbolExtractor | undefined {
  if (symbols === undefined) return defaultSymbolExtractor()
  if (symbols === false) return undefined
  if (
    typeof symbols !== 'object' ||
    symbols === null ||
    typeof symbols.extract !== 'function' ||
    typeof symbols.ready !== 'function'
  )
    throw new IsoagentError(
      'invalid_argument',
      'retrieval.symbols must be a SymbolExtractor or false',
    )
  return symbols
}
