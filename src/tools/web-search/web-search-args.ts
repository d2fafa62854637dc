import type { JsonSchema } from '../../kernel/tool-spec.ts'

/** Bounds of `web_search`'s arguments. */
export const WEB_SEARCH_LIMITS = {
  defaultLimit: 10,
  maxLimit: 50,
  defaultTimeoutS: 30,
  maxTimeoutS: 60,
  maxQuery: 2048,
} as const

/** Arguments of `web_search`. */
export interface WebSearchArgs {
  query: string
  engines?: string[]
  limit?: number
  timeout?: number
  format?: 'text' | 'json'
}

/** What the model reads about `web_search`. */
export const WEB_SEARCH_DESCRIPTION =
  'Search the web. Tiers run in order, each only while the merged results still miss the requirements ' +
  '(enough results with a title and URL from distinct domains, no engine error): a headless browser ' +
  '(where one is configured), then HTML pages and RSS feeds, then JSON APIs with keys. Results are merged ' +
  'and de-duplicated. Fails closed (exitCode 1, errorKind retrieval_requirements_not_met) rather than ' +
  'return too little; metadata.status is complete, partial or failed, metadata.tiers records each decision.'

/** The JSON Schema of {@link WebSearchArgs}. */
export const WEB_SEARCH_PARAMETERS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: {
      type: 'string',
      minLength: 1,
      maxLength: WEB_SEARCH_LIMITS.maxQuery,
      description: 'What to search for.',
    },
    engines: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 40 },
      description: 'Only these engines (by name; default: every configured engine, tier by tier).',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: WEB_SEARCH_LIMITS.maxLimit,
      description: `Results wanted (default ${WEB_SEARCH_LIMITS.defaultLimit}, max ${WEB_SEARCH_LIMITS.maxLimit}).`,
    },
    timeout: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: WEB_SEARCH_LIMITS.maxTimeoutS,
      description: `Deadline in seconds for the whole search (default ${WEB_SEARCH_LIMITS.defaultTimeoutS}, max ${WEB_SEARCH_LIMITS.maxTimeoutS}).`,
    },
    format: {
      type: 'string',
      enum: ['text', 'json'],
      description: 'Output format (default text).',
    },
  },
}
