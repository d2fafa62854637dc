/** Which wire protocol the model endpoint speaks. */
export type ChatProvider = 'openai' | 'anthropic'

/** What the user enters for the in-tab chat. */
export interface ModelSettings {
  provider: ChatProvider
  baseURL: string
  model: string
  apiKey: string
}

const KEY = 'isoagent-demo-chat'

/**
 * The settings of this tab, from `sessionStorage` (this tab only, gone when it closes; never
 * `localStorage`). The key is sent nowhere but to the model endpoint.
 */
export function loadSettings(): ModelSettings | undefined {
  try {
    const raw = sessionStorage.getItem(KEY)
    return raw ? (JSON.parse(raw) as ModelSettings) : undefined
  } catch {
    return undefined
  }
}

/** Keep `settings` for this tab's reloads (see {@link loadSettings}). */
export function saveSettings(settings: ModelSettings): void {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(settings))
  } catch {
    // Storage refused (a sandboxed frame): the settings live in memory only.
  }
}
