import * as fs from 'node:fs/promises'
import * as nodePath from 'node:path'
import { IsoagentError } from '../../src/errors.ts'
import type { TempFile, TempFiles } from '../../src/workspace/temp-files.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import { fromErrno } from './local-files.ts'

const READ_BACK_BYTES = 1024 * 1024

async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r').catch(() => undefined)
  if (handle === undefined) return
  await handle.sync().catch(() => undefined)
  await handle.close().catch(() => undefined)
}

/**
 * Temp files of a local workspace: `.<name>.<random>.isoagent-download` beside the target,
 * written with positioned writes, hashed in order as bytes arrive, promoted by `link` (never
 * replacing an existing file) or `rename` (overwrite), then the directory is synced.
 */
export function localTempFiles(resolve: (path: WorkspacePath) => string): TempFiles {
  return {
    async create(target) {
      if (target === '')
        throw new IsoagentError('is_directory', 'the workspace root is a directory')
      const real = resolve(target)
      const existing = await fs.lstat(real).catch(() => undefined)
      if (existing?.isDirectory())
        throw new IsoagentError('is_directory', `${target} is a directory`, {
          data: { path: target },
        })
      const dir = nodePath.dirname(real)
      try {
        await fs.mkdir(dir, { recursive: true })
      } catch (error) {
        throw fromErrno(error, WorkspacePath.parent(target), 'mkdir')
      }
      // node:crypto loads on first use: the CLI's start-up never pays for it.
      const { createHash, randomBytes } = await import('node:crypto')
      const temp = nodePath.join(
        dir,
        `.${nodePath.basename(real)}.${randomBytes(6).toString('hex')}.isoagent-download`,
      )
      let handle: fs.FileHandle
      try {
        handle = await fs.open(temp, 'wx+', 0o666)
      } catch (error) {
        throw fromErrno(error, target, 'create')
      }
      let open = true
      let gone = false
      const hash = createHash('sha256')
      let hashed = 0
      const close = async () => {
        if (!open) return
        open = false
        await handle.close().catch(() => undefined)
      }
      const file: TempFile = {
        async write(chunks, position) {
          let total = 0
          for (const c of chunks) total += c.length
          const { bytesWritten } = await handle.writev(chunks as Uint8Array[], position)
          if (bytesWritten < total) {
            const rest = Buffer.concat(chunks).subarray(bytesWritten)
            let done = 0
            while (done < rest.length) {
              const r = await handle.write(
                rest,
                done,
                rest.length - done,
                position + bytesWritten + done,
              )
              done += r.bytesWritten
            }
          }
          if (position === hashed) {
            for (const c of chunks) hash.update(c)
            hashed += total
          }
        },
        async sha256(length) {
          const buffer = Buffer.allocUnsafe(READ_BACK_BYTES)
          while (hashed < length) {
            const want = Math.min(READ_BACK_BYTES, length - hashed)
            const { bytesRead } = await handle.read(buffer, 0, want, hashed)
            if (bytesRead === 0) throw new IsoagentError('io', 'temp file is shorter than written')
            hash.update(buffer.subarray(0, bytesRead))
            hashed += bytesRead
          }
          return hash.copy().digest('hex')
        },
        async sync() {
          await handle.sync()
        },
        async promote({ overwrite }) {
          await close()
          const before = await fs.lstat(real).catch(() => undefined)
          if (before?.isDirectory())
            throw new IsoagentError('is_directory', `${target} is a directory`, {
              data: { path: target },
            })
          try {
            if (overwrite) {
              await fs.rename(temp, real)
            } else {
              try {
                await fs.link(temp, real)
              } catch (error) {
                const code = (error as NodeJS.ErrnoException).code
                if (code === 'EEXIST')
                  throw new IsoagentError(
                    'already_exists',
                    `${target} exists; pass overwrite: true to replace it`,
                    {
                      data: { path: target },
                    },
                  )
                if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV') throw error
                if (await fs.lstat(real).catch(() => undefined))
                  throw new IsoagentError(
                    'already_exists',
                    `${target} exists; pass overwrite: true to replace it`,
                    {
                      data: { path: target },
                    },
                  )
                await fs.rename(temp, real)
              }
              await fs.rm(temp, { force: true })
            }
            gone = true
          } catch (error) {
            throw IsoagentError.is(error) ? error : fromErrno(error, target, 'promote')
          }
          await syncDir(dir)
          return { overwritten: before !== undefined }
        },
        async discard() {
          await close()
          if (!gone) await fs.rm(temp, { force: true }).catch(() => undefined)
          gone = true
        },
      }
      return file
    },
  }
}
