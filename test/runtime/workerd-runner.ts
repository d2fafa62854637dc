import { Miniflare } from 'miniflare'
import { bundle } from './bundle.ts'

/** A worker module bundled and started in workerd, with the JSON its fetch handler answered. */
export interface WorkerdRun<T> {
  userAgent: string
  record: T
  dispose(): Promise<void>
}

/**
 * Bundle `workerSource` (a module whose fetch handler answers `{ userAgent, record }` as JSON,
 * importing from this folder), start it in workerd through Miniflare on loopback, fetch `path`
 * once and hand back the answer. Call `dispose()` when done.
 */
export async function runInWorkerd<T>(workerSource: string, path: string): Promise<WorkerdRun<T>> {
  const script = await bundle({
    contents: workerSource,
    resolveDir: import.meta.dirname,
    target: 'workerd',
  })
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2026-04-01',
    host: '127.0.0.1',
    port: 0,
    cf: false,
    telemetry: { enabled: false },
  })
  try {
    const response = await mf.dispatchFetch(`http://127.0.0.1${path}`)
    const body = await response.text()
    if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${body}`)
    const parsed = JSON.parse(body) as { userAgent: string; record: T }
    return { userAgent: parsed.userAgent, record: parsed.record, dispose: () => mf.dispose() }
  } catch (error) {
    await mf.dispose()
    throw error
  }
}
