/** The OpenAI-compatible embeddings endpoint the user gives the in-tab session. */
export interface EmbeddingsSettings {
  /** e.g. `https://api.openai.com/v1` (the client posts to `<baseURL>/embeddings`). */
  baseURL: string
  model: string
  /** Empty: no `Authorization` header. */
  apiKey: string
}

const KEY = 'isoagent-demo-embeddings'

/**
 * This tab's embeddings settings, from `sessionStorage` (this tab only, gone when it closes;
 * never `localStorage`). The key is sent nowhere but to the embeddings endpoint.
 */
export function loadEmbeddingsSettings(): EmbeddingsSettings | undefined {
  try {
    const raw = sessionStorage.getItem(KEY)
    return raw ? (JSON.parse(raw) as EmbeddingsSettings) : undefined
  } catch {
    return undefined
  }
}

/** Keep `settings` for the next load of this tab, or forget them (`undefined`). */
export function saveEmbeddingsSettings(settings: EmbeddingsSettings | undefined): void {
  try {
    if (settings) sessionStorage.setItem(KEY, JSON.stringify(settings))
    else sessionStorage.removeItem(KEY)
  } catch {
    // Storage refused (a sandboxed frame): nothing is kept.
  }
}
