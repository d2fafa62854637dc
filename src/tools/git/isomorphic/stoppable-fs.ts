import type { IsoGitFs } from '../fs-bridge.ts'
import { gitStoppedError } from '../stopping.ts'

/**
 * `fs` for one call that `signal` stops. Until the call's first write, an abort makes every read
 * (but `stat`, which isomorphic-git's `exists` would log about) and every write throw, so
 * isomorphic-git stops at its next file operation and no change begins. The first write marks
 * the call as changing; from then on nothing is refused and the operation runs to its end, so a
 * checkout, commit or stash is never left half-written in process.
 */
export function stoppableFs(
  fs: IsoGitFs,
  signal: AbortSignal,
  call: { changing: boolean },
): IsoGitFs {
  const p = fs.promises
  const check = () => {
    if (signal.aborted && !call.changing) throw gitStoppedError(signal)
  }
  const writing = () => {
    check()
    call.changing = true
  }
  return {
    promises: {
      async readFile(path, options) {
        check()
        return p.readFile(path, options)
      },
      async writeFile(path, data, options) {
        writing()
        return p.writeFile(path, data, options)
      },
      async unlink(path) {
        writing()
        return p.unlink(path)
      },
      async readdir(path) {
        check()
        return p.readdir(path)
      },
      async mkdir(path, options) {
        writing()
        return p.mkdir(path, options)
      },
      async rmdir(path) {
        writing()
        return p.rmdir(path)
      },
      async stat(path) {
        return p.stat(path)
      },
      async lstat(path) {
        check()
        return p.lstat(path)
      },
      async readlink(path) {
        check()
        return p.readlink(path)
      },
      async symlink(target, path) {
        writing()
        return p.symlink(target, path)
      },
    },
  }
}
