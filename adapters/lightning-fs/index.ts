// Until this adapter lands, this entry exports the isomorphic core (the same as `isoagent`).
export * from '../index.ts'
