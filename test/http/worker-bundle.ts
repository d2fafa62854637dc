// The Worker as wrangler bundles it for deployment, run in workerd through Miniflare.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Miniflare, type MiniflareOptions } from 'miniflare'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** The `compatibility_date` of wrangler.toml. */
export const COMPATIBILITY_DATE = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(
  readFileSync(join(root, 'wrangler.toml'), 'utf8'),
)![1]!

/** A bundle `wrangler deploy --dry-run` wrote, and its removal. */
export interface WorkerBundle {
  dir: string
  script: string
  remove(): void
}

/** The web demo's build, the Worker's static assets (wrangler.toml `[assets]`). */
export const WEB_DEMO_DIR = join(root, 'dist/web-demo')

/** Bundle the Worker like `npm run build:worker` does, into a temp directory. */
export async function buildWorker(): Promise<WorkerBundle> {
  // wrangler refuses an `[assets]` directory that does not exist: build the demo first if needed.
  if (!existsSync(join(WEB_DEMO_DIR, 'index.html'))) {
    await promisify(execFile)(
      process.execPath,
      [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'web-demo/vite.config.ts'],
      { cwd: root, timeout: 120_000 },
    )
  }
  const dir = mkdtempSync(join(tmpdir(), 'isoagent-worker-'))
  await promisify(execFile)(
    process.execPath,
    [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', dir],
    {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
      timeout: 120_000,
    },
  )
  return {
    dir,
    script: join(dir, 'worker.js'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** A Worker running in workerd, on a loopback port. */
export interface RunningWorker {
  mf: Miniflare
  url: string
  close(): Promise<void>
}

/**
 * Run the bundle in Miniflare with the Durable Object bindings of wrangler.toml (SQLite-backed
 * with `sqlite`), an R2 bucket `BUCKET` when `r2` is set, and `bindings` as vars.
 */
export async function runWorker(
  bundle: WorkerBundle,
  bindings: Record<string, string>,
  options: { r2?: boolean; sqlite?: boolean; extra?: Partial<MiniflareOptions> } = {},
): Promise<RunningWorker> {
  const mf = new Miniflare({
    // Listed, not found by Miniflare's own walk of the imports (which parses the 2 MB bundle and
    // takes seconds): the entry, then the wasm modules wrangler writes beside it (QuickJS's as
    // `<hash>-wasm`, tree-sitter's runtime and grammars as `<hash>-<name>.wasm`).
    modules: [
      { type: 'ESModule', path: bundle.script, contents: readFileSync(bundle.script, 'utf8') },
      ...readdirSync(bundle.dir)
        .filter((f) => f.endsWith('-wasm') || f.endsWith('.wasm'))
        .map((f) => ({
          type: 'CompiledWasm' as const,
          path: join(bundle.dir, f),
          contents: readFileSync(join(bundle.dir, f)),
        })),
    ],
    modulesRoot: bundle.dir,
    compatibilityDate: COMPATIBILITY_DATE,
    // `sqlite`: SQLite-backed, as wrangler.toml's `new_sqlite_classes` makes them (the workflow
    // store needs it). Not the default: with it, 50 sessions opened at once in Miniflare had
    // connections cut ("other side closed"), which the key-value objects do not.
    durableObjects: options.sqlite
      ? {
          SESSIONS: { className: 'IsoagentSession', useSQLite: true },
          REGISTRY: { className: 'IsoagentRegistry', useSQLite: true },
        }
      : { SESSIONS: 'IsoagentSession', REGISTRY: 'IsoagentRegistry' },
    ...(options.r2 ? { r2Buckets: ['BUCKET'] } : {}),
    bindings,
    host: '127.0.0.1',
    port: 0,
    cf: false,
    telemetry: { enabled: false },
    ...options.extra,
  } as MiniflareOptions)
  const url = (await mf.ready).toString().replace(/\/$/, '')
  return { mf, url, close: () => mf.dispose() }
}
