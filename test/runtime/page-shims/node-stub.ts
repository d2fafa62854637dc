// `node:fs`, `node:os` and `node:path` for the conformance modules bundled into a page. Only the
// node:fs oracle uses them, and the page never runs it: it records the workspace side and Node
// compares it with the oracle (browser-workspace.test.ts). Calling anything here is a bug.
function unavailable(name: string): never {
  throw new Error(`${name} is not available in the page (the node:fs oracle runs in Node)`)
}
export const tmpdir = (): string => unavailable('os.tmpdir')
export const dirname = (_path: string): string => unavailable('path.dirname')
export const join = (..._parts: string[]): string => unavailable('path.join')
