// Our package as a benchmark loads it: the tsc build in dist/, as users get it (a dist/ older than
// the sources stops the run: `npm run build` first), or with ISOAGENT_BENCH_SOURCES=1 the
// TypeScript sources through tsx, whose `__name` wrappers (esbuild keepNames) around functions
// made per call add microseconds to every call.
import { readdirSync, statSync } from 'node:fs'
import nodePath from 'node:path'

const REPO = nodePath.resolve(import.meta.dirname, '..')
/** Whether this run loads the sources (ISOAGENT_BENCH_SOURCES=1) instead of dist/. */
export const fromSources = process.env.ISOAGENT_BENCH_SOURCES === '1'

/** The newest modification time of a `.ts` file below `dir`. */
function newestSource(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((e) =>
      e.isDirectory()
        ? newestSource(nodePath.join(dir, e.name))
        : e.name.endsWith('.ts')
          ? statSync(nodePath.join(dir, e.name)).mtimeMs
          : 0,
    ),
  )
}

/** When the sources dist/ is built from last changed (not looked at for a run from sources). */
const sourcesChanged = fromSources
  ? 0
  : Math.max(
      newestSource(nodePath.join(REPO, 'src')),
      newestSource(nodePath.join(REPO, 'adapters')),
    )

/** Our module `path` (no extension, from the repository root): from dist/, or from the sources. */
export async function ours<T>(path: string): Promise<T> {
  if (fromSources) return (await import(`../${path}.ts`)) as T
  const built = nodePath.join(REPO, 'dist', `${path}.js`)
  let builtAt = 0
  try {
    builtAt = statSync(built).mtimeMs
  } catch {
    // No build: reported below.
  }
  if (builtAt < sourcesChanged)
    throw new Error(`${built} is missing or older than the sources: run npm run build first`)
  return (await import(built)) as T
}

/** How the figures' side was loaded, for the report's header. */
export const loadedFrom = fromSources ? 'sources via tsx' : 'dist/, tsc build'
