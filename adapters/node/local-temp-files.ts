import * as fs from 'node:fs/promises'
import * as nodePath from 'node:path'
import { IsoagentError } from '../../src/errors.ts'
import type { TempFile, TempFiles } from '../../src/workspace/temp-files.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import { pipeToFile } from './body-to-file.ts'
import { fromErrno } from './local-files.ts'
import { lockedIn, randomSuffix } from './local-write.ts'
import { claimNodeBody } from './node-body.ts'
import { pinDir, type PinnedDir } from './pinned-dir.ts'
import { DOWNLOAD_SUFFIX, tempNameFor } from './side-files.ts'
import { fileHash } from './temp-file-hash.ts'

/** Write `chunks` one after the other from `position`: one `pwritev`, more if it wrote less. */
async function writeAll(
  handle: fs.FileHandle,
  chunks: readonly Uint8Array[],
  position: number,
): Promise<void> {
  let total = 0
  for (const c of chunks) total += c.length
  const { bytesWritten } = await handle.writev(chunks as Uint8Array[], position)
  if (bytesWritten >= total) return
  const rest = Buffer.concat(chunks).subarray(bytesWritten)
  for (let done = 0; done < rest.length;) {
    const r = await handle.write(rest, done, rest.length - done, position + bytesWritten + done)
    done += r.bytesWritten
  }
}

async function syncDir(dir: PinnedDir): Promise<void> {
  const handle = await fs.open(dir.at('.'), 'r').catch(() => undefined)
  if (handle === undefined) return
  await handle.sync().catch(() => undefined)
  await handle.close().catch(() => undefined)
}

/**
 * Temp files of a local workspace: `.<name>.<pid>-<random>.isoagent-download` beside the
 * target, in its directory pinned by descriptor (see pinned-dir.ts), written with positioned
 * writes (bodies of the Node transport piped straight in: see body-to-file.ts), hashed in order
 * as bytes arrive (past the first MiBs on the hash worker: see temp-file-hash.ts), promoted under the file's write lock by `link` (never
 * replacing an existing file) or `rename` (overwrite), then the directory is synced.
 */
export function localTempFiles(
  realRoot: string,
  resolve: (path: WorkspacePath) => string,
): TempFiles {
  return {
    async create(target) {
      if (target === '')
        throw new IsoagentError('is_directory', 'the workspace root is a directory')
      const real = resolve(target)
      const name = nodePath.basename(real)
      let dir: PinnedDir
      try {
        dir = pinDir(realRoot, nodePath.dirname(real), true, target)
      } catch (error) {
        throw fromErrno(error, WorkspacePath.parent(target), 'mkdir')
      }
      const existing = await fs.lstat(dir.at(name)).catch(() => undefined)
      if (existing?.isDirectory()) {
        dir.close()
        throw new IsoagentError('is_directory', `${target} is a directory`, {
          data: { path: target },
        })
      }
      const temp = dir.at(tempNameFor(name, DOWNLOAD_SUFFIX, await randomSuffix()))
      const at = dir.at(name)
      let handle: fs.FileHandle
      try {
        handle = await fs.open(temp, 'wx+', 0o666)
      } catch (error) {
        dir.close()
        throw fromErrno(error, target, 'create')
      }
      let open = true
      let gone = false
      const hashing = await fileHash(handle.fd)
      const close = async () => {
        if (!open) return
        open = false
        await hashing.close()
        await handle.close().catch(() => undefined)
      }
      const exists = () =>
        new IsoagentError(
          'already_exists',
          `${target} exists; pass overwrite: true to replace it`,
          {
            data: { path: target },
          },
        )
      /** Put the temp file in place; whether a file was there before. */
      const place = async (overwrite: boolean): Promise<boolean> => {
        const before = await fs.lstat(at).catch(() => undefined)
        if (before?.isDirectory())
          throw new IsoagentError('is_directory', `${target} is a directory`, {
            data: { path: target },
          })
        if (overwrite) {
          await fs.rename(temp, at)
          return before !== undefined
        }
        try {
          await fs.link(temp, at)
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code
          if (code === 'EEXIST') throw exists()
          if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV') throw error
          if (await fs.lstat(at).catch(() => undefined)) throw exists()
          await fs.rename(temp, at)
        }
        await fs.rm(temp, { force: true })
        return false
      }
      const file: TempFile = {
        async write(chunks, position) {
          await writeAll(handle, chunks, position)
          hashing.written(chunks, position)
        },
        writeBody(body, position, progress) {
          const stream = claimNodeBody(body)
          if (stream === undefined) return undefined
          return pipeToFile(stream, position, progress, (chunks, at) => file.write(chunks, at))
        },
        sha256(length) {
          return hashing.digest(length, handle)
        },
        async sync() {
          await handle.sync()
        },
        async promote({ overwrite }) {
          await close()
          try {
            const before = await lockedIn(dir, real, name, target, () => place(overwrite))
            gone = true
            await syncDir(dir)
            dir.close()
            return { overwritten: before }
          } catch (error) {
            throw IsoagentError.is(error) ? error : fromErrno(error, target, 'promote')
          }
        },
        async discard() {
          await close()
          if (!gone) await fs.rm(temp, { force: true }).catch(() => undefined)
          gone = true
          dir.close()
        },
      }
      return file
    },
  }
}
