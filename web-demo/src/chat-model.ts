// Loaded on the first chat turn in "this tab" mode: the providers stay out of the first load.
import {
  ANTHROPIC_MAX_TOKENS,
  anthropic,
  openAICompatible,
  type LanguageModel,
} from '../../adapters/browser/index.ts'
import type { ModelSettings } from './chat-settings.ts'

/** The model the settings name, over this page's `fetch`. */
export function modelOf(settings: ModelSettings): LanguageModel {
  const common = {
    baseURL: settings.baseURL.replace(/\/+$/, ''),
    model: settings.model,
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
  }
  return settings.provider === 'anthropic'
    ? anthropic({
        ...common,
        maxOutputTokens: ANTHROPIC_MAX_TOKENS,
        // Anthropic answers a page's CORS preflight only with this header.
        headers: { 'anthropic-dangerous-direct-browser-access': 'true' },
      })
    : openAICompatible(common)
}
