import { openAICompatibleEmbeddings, type EmbeddingModel } from '../adapters/index.ts'

/** `isoagent serve`'s embedding flags, for `parseArgs`. */
export const EMBEDDINGS_OPTIONS = {
  'embeddings-url': { type: 'string' },
  'embeddings-model': { type: 'string' },
} as const

/** Their lines of the usage text. */
export const EMBEDDINGS_USAGE = `      --embeddings-url U    an OpenAI-compatible embeddings endpoint (POST U/embeddings):
                            search gains the semantic and hybrid modes
      --embeddings-model M  its model (required with --embeddings-url); the key, if any,
                            from $ISOAGENT_EMBEDDINGS_KEY`

/** What the flags chose: an embedder, none, or a usage error. */
export type EmbeddingsChoice =
  | { kind: 'none' }
  | { kind: 'embeddings'; embeddings: EmbeddingModel; describe: string }
  | { kind: 'error'; message: string }

/** The embedder the flags name (the key from `$ISOAGENT_EMBEDDINGS_KEY`). */
export function embeddingsFromFlags(
  values: { 'embeddings-url'?: string | undefined; 'embeddings-model'?: string | undefined },
  env: Record<string, string | undefined>,
): EmbeddingsChoice {
  const url = values['embeddings-url']
  const model = values['embeddings-model']
  if (url === undefined && model === undefined) return { kind: 'none' }
  if (url === undefined)
    return { kind: 'error', message: '--embeddings-model needs --embeddings-url' }
  if (model === undefined || model.trim() === '')
    return { kind: 'error', message: '--embeddings-url needs --embeddings-model' }
  if (!/^https?:\/\//i.test(url))
    return { kind: 'error', message: `--embeddings-url ${url} is not an http(s) URL` }
  const apiKey = env.ISOAGENT_EMBEDDINGS_KEY
  try {
    const embeddings = openAICompatibleEmbeddings({
      baseURL: url,
      model,
      ...(apiKey ? { apiKey } : {}),
    })
    return {
      kind: 'embeddings',
      embeddings,
      describe: `${model} at ${url}${apiKey ? '' : ' (no key)'}`,
    }
  } catch (error) {
    return { kind: 'error', message: `--embeddings-url: ${(error as Error).message}` }
  }
}
