// Until the HTTP app lands, this entry exports the isomorphic core (the same as `isoagent`).
export * from '../adapters/index.ts'
