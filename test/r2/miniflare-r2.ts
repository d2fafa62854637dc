import { Miniflare } from 'miniflare'
import type { R2BucketLike } from '../../adapters/r2/index.ts'

/** A local R2 bucket served by workerd through Miniflare, and its helpers for tests. */
export interface LocalR2 {
  mf: Miniflare
  /** The binding, proxied into workerd: every call runs in workerd's R2. */
  bucket: R2BucketLike
  close(): Promise<void>
}

/** Start workerd with an R2 bucket bound as `name` (kept in memory, gone on close). */
export async function startLocalR2(name = 'BUCKET'): Promise<LocalR2> {
  const mf = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response() } }',
    r2Buckets: [name],
    compatibilityDate: '2026-04-01',
    host: '127.0.0.1',
    port: 0,
    cf: false,
    telemetry: { enabled: false },
  })
  // Miniflare's proxy type must fit the workspace's structural binding type.
  const bucket: R2BucketLike = await mf.getR2Bucket(name)
  return { mf, bucket, close: () => mf.dispose() }
}

let sequence = 0

/** A fresh `base…/` prefix per test. */
export function freshPrefix(base = ''): string {
  sequence++
  return `${base}t${sequence}-${Math.random().toString(36).slice(2, 8)}/`
}

const encoder = new TextEncoder()

/** Put `files` under `prefix`, straight through the binding. */
export async function seed(
  bucket: R2BucketLike,
  prefix: string,
  files: Record<string, string | Uint8Array>,
): Promise<void> {
  for (const [path, content] of Object.entries(files))
    await bucket.put(prefix + path, typeof content === 'string' ? encoder.encode(content) : content)
}

/** Every key under `prefix`, all pages, in R2's order. */
export async function rawKeys(bucket: R2BucketLike, prefix: string): Promise<string[]> {
  const keys: string[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await bucket.list({ prefix, ...(cursor === undefined ? {} : { cursor }) })
    keys.push(...page.objects.map((o) => o.key))
    if (!page.truncated || page.cursor === undefined) return keys
    cursor = page.cursor
  }
}

/** The bytes of one key, or undefined. */
export async function rawBytes(bucket: R2BucketLike, key: string) {
  const object = await bucket.get(key)
  return object === null ? undefined : new Uint8Array(await object.arrayBuffer())
}

/** Delete every key under `prefix`. */
export async function wipe(bucket: R2BucketLike, prefix: string): Promise<void> {
  const keys = await rawKeys(bucket, prefix)
  for (let i = 0; i < keys.length; i += 1000) await bucket.delete(keys.slice(i, i + 1000))
}
