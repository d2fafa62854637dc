import { localTempFiles } from './local-temp-files.ts'
import { realpathSync, statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import * as nodePath from 'node:path'
import * as nodeFs from 'node:fs'
import {
  type GitBackend,
  type IsoGitFs,
  IsoagentError,
  type ListPage,
  type Shell,
  type WorkspaceServices,
} from '../../src/index.ts'
import { deferredGitBackend, lazyIsomorphicGitBackend } from '../../src/tools/git/lazy-backend.ts'
import { localFiles, type LocalFilesOptions } from './local-files.ts'
import { listAsync, makeDir, removeEntry, renameEntry, type LocalTree } from './local-entries.ts'
import { localWrite } from './local-write.ts'
import { localAppend } from './local-append.ts'
import { sweepStaleTemps } from './side-files.ts'
import { nodeShell } from './node-shell.ts'
import { workerScanner, type WorkerScanner } from './scan-pool.ts'
import { gitCliAvailable, gitCliBackend } from './git-cli-backend.ts'

/** Options of {@link localWorkspace}. */
export interface LocalWorkspaceOptions {
  /** Chunk size of streamed reads (default 1 MiB). */
  readChunkBytes?: number
  /**
   * Serve path resolution, `stat`, `list`, reads of at most 1 MiB (`SYNC_READ_MAX_BYTES`) and the
   * chunks of streamed reads with synchronous system calls (default true). On a local disk each
   * such call takes a few microseconds, where a round trip through Node's thread pool costs tens;
   * a search over tens of thousands of files is several times faster. Set it to false for a root on a network
   * file system, where one call may block the event loop for long.
   */
  syncMetadata?: boolean
  /**
   * Variables for `bash` commands, added on top of the clean base environment (`PATH`, `HOME`,
   * `TMPDIR` when set, `LANG=C.UTF-8`, `TERM=dumb`, `NO_COLOR=1`, `PAGER=cat`, `GIT_PAGER=cat`,
   * `GIT_TERMINAL_PROMPT=0`). Nothing else of the host's environment reaches commands.
   */
  shellEnv?: Record<string, string>
  /**
   * `ulimit -u` for `bash` commands (the most processes the user may have while one runs), to
   * bound fork bombs where the OS enforces it. Off by default; see `nodeShell`.
   */
  shellMaxProcesses?: number
  /**
   * Which backend serves the `git` tool: `cli` (the git executable), `isomorphic` (isomorphic-git
   * on `node:fs`), or `auto` (default): the CLI when `git` is on PATH, else isomorphic-git. Both
   * give identical results; the CLI is much faster on large repositories.
   */
  git?: 'auto' | 'cli' | 'isomorphic'
  /**
   * Worker threads that read and scan files for `search` grep while the calling thread walks
   * the tree (default: one per CPU, at most 4; 0 on a single CPU). 0 scans on the calling
   * thread only. A grep past its first 64 files starts them and scans on the calling thread
   * until they are up; they exit after 2 minutes without work.
   */
  searchThreads?: number
  /**
   * Reuse the listing of a directory that has not changed since it was last listed (default
   * true): a walk over a tree listed before costs one `stat` per directory. A directory counts as
   * unchanged while its device, inode, ctime and mtime are; one changed in the 2 s before it was
   * listed is listed again every time, since a second change within the same timestamp tick
   * would leave them as they were. Only on Linux, and only on ext2/3/4, xfs, btrfs, tmpfs,
   * overlayfs, zfs and f2fs, on the root's device: never on network or FUSE file systems.
   */
  listingCache?: boolean
}

/** See {@link LocalWorkspaceOptions.searchThreads}. */
function defaultSearchThreads(): number {
  const cpus = availableParallelism()
  return cpus > 1 ? Math.min(cpus, 4) : 0
}

/**
 * The git backend for a local repository at `root`. `auto` looks for the git executable at the
 * first use, not when the workspace opens (a session that runs no `git` spawns no process).
 */
function localGitBackend(root: string, mode: 'auto' | 'cli' | 'isomorphic'): GitBackend {
  if (mode === 'auto')
    return deferredGitBackend(() => localGitBackend(root, gitCliAvailable() ? 'cli' : 'isomorphic'))
  if (mode === 'cli') return gitCliBackend(root)
  return lazyIsomorphicGitBackend({
    fs: nodeFs as unknown as IsoGitFs,
    dir: root,
    displayRoot: root,
  })
}

/** The real path of the existing directory `root`, or `not_found`. */
function realRootOf(root: string): string {
  try {
    const realRoot = realpathSync(nodePath.resolve(root))
    if (!statSync(realRoot).isDirectory()) throw new Error('not a directory')
    return realRoot
  } catch (cause) {
    throw new IsoagentError('not_found', `workspace root ${root} is not an existing directory`, {
      data: { root },
      cause,
    })
  }
}

/** The `bash` of the workspace: `shellEnv` checked to map names to strings. */
function localShell(realRoot: string, options: LocalWorkspaceOptions): Shell {
  if (
    options.shellEnv !== undefined &&
    (typeof options.shellEnv !== 'object' ||
      options.shellEnv === null ||
      Object.values(options.shellEnv).some((v) => typeof v !== 'string'))
  )
    throw new IsoagentError('invalid_argument', 'shellEnv must map names to string values')
  return nodeShell({
    root: realRoot,
    ...(options.shellEnv ? { env: options.shellEnv } : {}),
    ...(options.shellMaxProcesses !== undefined ? { maxProcesses: options.shellMaxProcesses } : {}),
  })
}

/** The search's worker threads ({@link LocalWorkspaceOptions.searchThreads}), if any. */
function localScanner(
  realRoot: string,
  files: ReturnType<typeof localFiles>,
  filesOptions: LocalFilesOptions,
  threads: number,
): WorkerScanner | undefined {
  if (!Number.isInteger(threads) || threads < 0)
    throw new IsoagentError('invalid_argument', 'searchThreads must be a whole number ≥ 0')
  if (threads === 0) return undefined
  return workerScanner({ root: realRoot, threads, hints: files.dirHints, options: filesOptions })
}

/**
 * A workspace on local disk rooted at `root`. Every path is contained twice: by string
 * (`WorkspacePath`) and, at open time, by resolving symlinks against the real root, so a
 * link that points outside is refused (`path_escape`). Writes go to a temp file in the same
 * directory and are renamed into place, keeping the file's mode; appends add to the file in
 * place (see local-append.ts).
 */
export function localWorkspace(
  root: string,
  options: LocalWorkspaceOptions = {},
): WorkspaceServices {
  const realRoot = realRootOf(root)
  const filesOptions: LocalFilesOptions = {
    syncIo: options.syncMetadata !== false,
    chunkBytes: options.readChunkBytes ?? 1024 * 1024,
    listingCache: options.listingCache !== false,
  }
  const files = localFiles(realRoot, filesOptions)
  const tree: LocalTree = { realRoot, resolve: files.resolve }
  const shell = localShell(realRoot, options)
  const scanner = localScanner(
    realRoot,
    files,
    filesOptions,
    options.searchThreads ?? defaultSearchThreads(),
  )

  // Temp files a crashed process left behind (see side-files.ts), removed in the background.
  let closed = false
  const sweep = new Promise((done) => setImmediate(done))
    .then(() => sweepStaleTemps(realRoot, () => closed))
    .catch(() => undefined)

  return {
    capabilities: {
      read: true,
      write: true,
      exec: true,
      git: true,
      search: true,
      localRoot: realRoot,
      atomicRename: true,
      conditionalWrite: false,
      symlinks: true,
    },
    descriptor: { kind: 'local', root: realRoot },
    shell,
    gitFs: localGitBackend(realRoot, options.git ?? 'auto'),
    tempFiles: localTempFiles(realRoot, files.resolve),
    ...(scanner ? { scanner } : {}),
    async close() {
      closed = true
      await Promise.all([scanner?.close(), sweep])
    },
    stat: files.stat,
    read: files.readRange,
    readNow: files.readNow,
    readStream: files.readStream,
    byteIndex: files.byteIndex,
    write: localWrite(realRoot, files.resolve),
    append: localAppend(realRoot, files.resolve, { syncIo: filesOptions.syncIo }),
    ...(filesOptions.syncIo ? { listNow: files.listSync } : {}),
    async list(path, listOptions = {}): Promise<ListPage> {
      if (filesOptions.syncIo) return files.listSync(path, listOptions)
      return listAsync(tree, path, listOptions)
    },
    mkdir: (path) => makeDir(tree, path),
    remove: (path, removeOptions) => removeEntry(tree, path, removeOptions),
    rename: (from, to) => renameEntry(tree, from, to),
  } satisfies WorkspaceServices
}
