// The page side of browser-workspace.test.ts, bundled for Chromium with Node built-ins forbidden.
// The conformance suites are bundled too: `vitest` and the `node:*` modules they import resolve to
// page-shims/ (see the test's esbuild plugin).
import {
  Agent,
  IsoagentError,
  WorkspacePath,
  browserWorkspace,
  type ToolResult,
  type WorkspaceServices,
} from '../../adapters/browser/index.ts'
import {
  browserFixture,
  browserPortWorkspace,
  seed,
  wipeFs,
} from '../conformance/browser-fixture.ts'
import { operations, outcomeOf, portConformance, type Outcome } from '../conformance/port-cases.ts'
import { toolConformance } from '../conformance/tool-cases.ts'
import { runCases, type CaseResult } from './page-shims/vitest.ts'
import { runWorkspaceScenario, treeHex, type ScenarioRecord } from './browser-scenario.ts'

const encoder = new TextEncoder()
const decoder = new TextDecoder()

// tool-cases.ts measures outputs with Buffer.byteLength; that is all of Buffer it needs.
;(globalThis as unknown as { Buffer?: unknown }).Buffer ??= {
  byteLength: (text: string) => encoder.encode(text).length,
}

const brief = (r: ToolResult) => ({
  exitCode: r.exitCode,
  output: r.output,
  errorKind: r.errorKind === undefined ? null : JSON.parse(JSON.stringify(r.errorKind)),
})

/** The tool scenario on a browser workspace named `name` (left in IndexedDB afterwards). */
async function scenario(name: string): Promise<ScenarioRecord> {
  return runWorkspaceScenario(browserWorkspace({ name }))
}

/** A second workspace object on `name`: what it holds and which tools a session on it offers. */
async function reopen(name: string) {
  // The first workspace was closed: lightning-fs's cross-tab lock must be free already (it would
  // otherwise be held until 500 ms after its last operation).
  const heldBefore = ((await navigator.locks.query()).held ?? []).map((lock) => lock.name ?? '')
  const workspace = browserWorkspace({ name })
  const tree = await treeHex(workspace)
  const heldOpen = ((await navigator.locks.query()).held ?? []).map((lock) => lock.name ?? '')
  const session = await Agent.create().session(workspace)
  const toolNames = session.toolNames()
  const read = brief(await session.tool('read', { file_path: 'out/log.txt' }))
  await session.close()
  return { tree, toolNames, read, heldBefore, heldOpen }
}

/** Two sessions edit one file at once (both read it before either writes). */
async function concurrentEdits(name: string) {
  const workspace = browserWorkspace({ name })
  await seed(workspace, { 'race.txt': 'alpha\nbeta\n' })
  let arrived = 0
  let open!: () => void
  const barrier = new Promise<void>((done) => (open = done))
  const gated: WorkspaceServices = {
    ...workspace,
    async read(path, range) {
      const bytes = await workspace.read(path, range)
      if (++arrived === 2) open()
      await barrier
      return bytes
    },
  }
  const agent = Agent.create()
  const [a, b] = await Promise.all([agent.session(gated), agent.session(gated)])
  const edits = await Promise.all([
    a!.tool('edit', { file_path: 'race.txt', old_string: 'alpha', new_string: 'ALPHA' }),
    b!.tool('edit', { file_path: 'race.txt', old_string: 'beta', new_string: 'BETA' }),
  ])
  // The same through the port: four writes that all read one version.
  const { version } = await workspace.write(WorkspacePath.parse('c.txt'), encoder.encode('0'))
  const writes = await Promise.allSettled(
    ['1', '2', '3', '4'].map((v) =>
      workspace.write(WorkspacePath.parse('c.txt'), encoder.encode(v), {
        precondition: { ifVersion: version },
      }),
    ),
  )
  const text = decoder.decode(await workspace.read(WorkspacePath.parse('race.txt')))
  await a!.close() // closes the workspace they share
  await b!.close()
  await wipeFs(name)
  return {
    edits: edits.map(brief),
    text,
    writes: writes.map((w) =>
      w.status === 'fulfilled'
        ? 'ok'
        : IsoagentError.is(w.reason)
          ? w.reason.code
          : String(w.reason),
    ),
  }
}

/** The shared suites, in the page: every case but the node:fs oracle one. */
async function conformance(): Promise<CaseResult[]> {
  toolConformance('browser (Chromium IndexedDB)', browserFixture, { localDisk: false })
  portConformance('browser (Chromium IndexedDB)', browserPortWorkspace)
  return runCases((name) => name.includes('behaves like node:fs'))
}

/** The port-conformance operations on Chromium's IndexedDB, for Node to check against node:fs. */
async function portOutcomes(): Promise<{ label: string; outcome: Outcome }[]> {
  const { workspace, cleanup } = await browserPortWorkspace()
  const out: { label: string; outcome: Outcome }[] = []
  try {
    for (const op of operations)
      out.push({ label: op.label, outcome: await outcomeOf(() => op.workspace(workspace)) })
  } finally {
    await cleanup()
  }
  return JSON.parse(JSON.stringify(out))
}

/** {@link treeHex}, with files over 1 KiB shown by size (a failing check stays readable). */
async function boundedTree(workspace: WorkspaceServices): Promise<Record<string, string>> {
  const tree = await treeHex(workspace)
  for (const [path, hex] of Object.entries(tree))
    if (hex.length > 2048) tree[path] = `<${hex.length / 2} bytes>`
  return tree
}

/**
 * `n` random bytes. Chromium compresses what IndexedDB stores, so a run of one byte would fit in
 * any quota; random bytes do not compress.
 */
function randomBytes(n: number): Uint8Array {
  const bytes = new Uint8Array(n)
  for (let at = 0; at < n; at += 65536) crypto.getRandomValues(bytes.subarray(at, at + 65536))
  return bytes
}

/** Writes past the origin's quota (set by the test through CDP). */
async function quota(name: string, bytes: number) {
  const workspace = browserWorkspace({ name })
  await seed(workspace, { 'keep.txt': 'old\n' })
  const before = await boundedTree(workspace)
  const session = await Agent.create().session(workspace)
  // Printable (the write tool takes text) and as incompressible as printable text can be.
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  const big = Array.from(randomBytes(bytes), (b) => letters[b & 63]).join('')
  const created = brief(await session.tool('write', { file_path: 'dir/big.txt', content: big }))
  const replaced = brief(await session.tool('write', { file_path: 'keep.txt', content: big }))
  let port: string
  try {
    await workspace.write(WorkspacePath.parse('port.bin'), randomBytes(bytes))
    port = 'ok'
  } catch (error) {
    port = IsoagentError.is(error) ? `${error.code}: ${error.message}` : String(error)
  }
  const after = await boundedTree(workspace)
  const rootNames = (await workspace.list(WorkspacePath.root)).entries.map((e) => e.name)
  const small = brief(await session.tool('write', { file_path: 'small.txt', content: 'fits\n' }))
  await session.close()
  await wipeFs(name)
  return { before, after, rootNames, created, replaced, port, small }
}

Object.assign(globalThis, {
  isoagentBrowser: {
    scenario,
    reopen,
    concurrentEdits,
    conformance,
    portOutcomes,
    quota,
    treeOf: async (name: string) => {
      const workspace = browserWorkspace({ name })
      try {
        return await treeHex(workspace)
      } finally {
        await workspace.close!()
      }
    },
  },
})
