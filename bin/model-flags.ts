import { anthropic, openAICompatible, type LanguageModel } from '../adapters/index.ts'

/** The options `isoagent serve` takes to give its sessions a model. */
export const MODEL_OPTIONS = {
  'model-provider': { type: 'string' },
  'model-base-url': { type: 'string' },
  model: { type: 'string' },
} as const

export const MODEL_USAGE = `      --model-provider P  openai (any OpenAI-compatible endpoint) or anthropic: sessions get
                          a model, so POST /messages and the demo's chat run the agent loop
      --model-base-url U  the API root (default https://api.openai.com/v1 or
                          https://api.anthropic.com/v1)
      --model M           the model id (default gpt-4o-mini or claude-sonnet-4-5)
                          The key comes from $ISOAGENT_MODEL_KEY, else $OPENAI_API_KEY or
                          $ANTHROPIC_API_KEY (by provider); it is never printed.`

const DEFAULTS = {
  openai: { baseURL: 'https://api.openai.com/v1', model: 'gpt-4o-mini', keyVar: 'OPENAI_API_KEY' },
  anthropic: {
    baseURL: 'https://api.anthropic.com/v1',
    model: 'claude-sonnet-4-5',
    keyVar: 'ANTHROPIC_API_KEY',
  },
} as const

/** What the model flags gave: a model, none asked for, or a usage error's text. */
export type ModelChoice =
  | { kind: 'none' }
  | { kind: 'model'; model: LanguageModel; describe: string }
  | { kind: 'error'; message: string }

/** Parsed flag values of {@link MODEL_OPTIONS}. */
export interface ModelFlagValues {
  'model-provider'?: string | undefined
  'model-base-url'?: string | undefined
  model?: string | undefined
}

/** The model `--model-provider`/`--model-base-url`/`--model` and the environment describe. */
export function modelFromFlags(
  values: ModelFlagValues,
  env: Record<string, string | undefined>,
): ModelChoice {
  const provider = values['model-provider']
  if (provider === undefined) {
    if (values.model !== undefined || values['model-base-url'] !== undefined)
      return { kind: 'error', message: '--model and --model-base-url need --model-provider' }
    return { kind: 'none' }
  }
  if (provider !== 'openai' && provider !== 'anthropic')
    return {
      kind: 'error',
      message: `--model-provider must be openai or anthropic, not ${provider}`,
    }
  const defaults = DEFAULTS[provider]
  const baseURL = values['model-base-url'] ?? defaults.baseURL
  try {
    const url = new URL(baseURL)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)')
  } catch {
    return { kind: 'error', message: `--model-base-url is not an http(s) URL: ${baseURL}` }
  }
  const model = values.model ?? defaults.model
  const apiKey = env.ISOAGENT_MODEL_KEY || env[defaults.keyVar] || undefined
  const options = { baseURL, model, ...(apiKey !== undefined ? { apiKey } : {}) }
  return {
    kind: 'model',
    model: provider === 'openai' ? openAICompatible(options) : anthropic(options),
    describe: `${provider} ${model} at ${baseURL}${apiKey !== undefined ? '' : ' (no key)'}`,
  }
}
