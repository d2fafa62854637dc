// The fakes' deterministic embedding (Web APIs only: the OpenAI-wire fake in Node and the fake
// Workers AI binding in workerd share it): a small concept table so that synonyms meet
// ("shutdown", "close", "teardown" share a dimension); other words land on hashed dimensions.

/** Vector length of the fake. */
export const FAKE_DIMENSION = 32

const CONCEPTS: string[][] = [
  ['shutdown', 'shut', 'close', 'closing', 'teardown', 'dispose', 'stop', 'terminate'],
  ['database', 'db', 'sql', 'table', 'row'],
  ['network', 'socket', 'http', 'request', 'connection', 'connections'],
  ['colour', 'color', 'paint', 'hue'],
  ['config', 'configuration', 'settings', 'options'],
  ['parse', 'parser', 'parsing', 'decode'],
  ['error', 'failure', 'fault', 'exception'],
  ['cache', 'memo', 'memoize'],
]

function hashWord(word: string): number {
  let h = 2166136261
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619)
  return 8 + ((h >>> 0) % (FAKE_DIMENSION - 8))
}

/** The fake's embedding of a text: concept dimensions weigh 1, other words 0.2. */
export function embedText(text: string): number[] {
  const v: number[] = Array.from({ length: FAKE_DIMENSION }, () => 0)
  const words =
    text
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .match(/[a-z]+/g) ?? []
  for (const word of words) {
    const concept = CONCEPTS.findIndex((c) => c.includes(word))
    if (concept >= 0) v[concept]! += 1
    else v[hashWord(word)]! += 0.2
  }
  if (!v.some((x) => x !== 0)) v[v.length - 1] = 1
  return v
}
