import { readFile, stat } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import { getMimeType } from 'hono/utils/mime'
import type { StaticAssets } from './app.ts'

/**
 * Static files of a directory on disk for `createApp({ assets })` (Node): `GET`/`HEAD` of a
 * path under `root` answers with the file and its content type (`application/wasm` included);
 * `/` and a directory answer with their `index.html`. Paths that leave `root`, dot files and
 * anything missing answer `undefined`, so the app's own routes and 404 apply. Files under
 * `assets/` (named by content hash) may be cached for a year; the rest are revalidated.
 */
export function staticDirectory(root: string): StaticAssets {
  const base = resolve(root)
  return async (request) => {
    let path: string
    try {
      path = decodeURIComponent(new URL(request.url).pathname)
    } catch {
      return undefined
    }
    if (path.includes('\0') || path.split('/').some((part) => part.startsWith('.')))
      return undefined
    let file = resolve(join(base, path))
    if (file !== base && !file.startsWith(base + sep)) return undefined
    let info = await stat(file).catch(() => undefined)
    if (info?.isDirectory()) {
      file = join(file, 'index.html')
      info = await stat(file).catch(() => undefined)
    }
    if (!info?.isFile()) return undefined
    const type = getMimeType(file) ?? 'application/octet-stream'
    const headers = {
      'content-type': type,
      'content-length': String(info.size),
      'cache-control': path.startsWith('/assets/')
        ? 'public, max-age=31536000, immutable'
        : 'no-cache',
      'x-content-type-options': 'nosniff',
    }
    if (request.method === 'HEAD') return new Response(null, { headers })
    return new Response(new Uint8Array(await readFile(file)), { headers })
  }
}
