// The shared conformance suites, unchanged, against browserWorkspace in Node: lightning-fs on
// fake-indexeddb. The same adapter runs on Chromium's real IndexedDB in
// test/runtime/browser-workspace.test.ts.
import './browser-env.ts'
import LightningFS from '@isomorphic-git/lightning-fs'
import { afterEach, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  WorkspacePath,
  browserWorkspace,
  type BrowserWorkspaceOptions,
  type WorkspaceServices,
} from '../../adapters/browser/index.ts'
import {
  browserFixture,
  browserPortWorkspace,
  treeOf,
  uniqueFsName,
  wipeFs,
} from './browser-fixture.ts'
import { portConformance } from './port-cases.ts'
import { toolConformance } from './tool-cases.ts'

toolConformance('browser (fake-indexeddb)', browserFixture, { localDisk: false })

portConformance('browser (fake-indexeddb)', browserPortWorkspace)

describe('browserWorkspace specifics (fake-indexeddb)', () => {
  const enc = new TextEncoder()
  const dec = new TextDecoder()
  const p = (path: string) => WorkspacePath.parse(path)
  const names: string[] = []
  const opened: WorkspaceServices[] = []

  /** A workspace on a fresh file system (closed and wiped after the test). */
  function fresh(options: Omit<BrowserWorkspaceOptions, 'name'> = {}, name = uniqueFsName()) {
    if (!names.includes(name)) names.push(name)
    const workspace = browserWorkspace({ ...options, name })
    opened.push(workspace)
    return { name, workspace }
  }

  afterEach(async () => {
    for (const workspace of opened.splice(0)) await workspace.close?.()
    for (const name of names.splice(0)) await wipeFs(name)
  })

  /** lightning-fs's IndexedDB backend (internal), faulted in the quota test. */
  interface LfsIdb {
    writeFile(inode: number, data: Uint8Array): Promise<void>
  }

  /** The keys of lightning-fs's file store, read straight from IndexedDB. */
  async function rawKeys(name: string): Promise<IDBValidKey[]> {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open(name)
      request.onsuccess = () => resolve(request.result)
      request.onerror = () => reject(request.error)
    })
    try {
      return await new Promise((resolve, reject) => {
        const request = db
          .transaction(`${name}_files`, 'readonly')
          .objectStore(`${name}_files`)
          .getAllKeys()
        request.onsuccess = () => resolve(request.result)
        request.onerror = () => reject(request.error)
      })
    } finally {
      db.close()
    }
  }

  /** The superblock lightning-fs saved in IndexedDB: names under the root directory. */
  async function savedRootNames(name: string): Promise<string[]> {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open(name)
      request.onsuccess = () => resolve(request.result)
      request.onerror = () => reject(request.error)
    })
    try {
      const root = await new Promise<Map<unknown, Map<unknown, unknown>>>((resolve, reject) => {
        const request = db
          .transaction(`${name}_files`, 'readonly')
          .objectStore(`${name}_files`)
          .get('!root')
        request.onsuccess = () => resolve(request.result)
        request.onerror = () => reject(request.error)
      })
      return [...root.get('/')!.keys()].filter((k): k is string => typeof k === 'string').sort()
    } finally {
      db.close()
    }
  }

  it('describes itself and offers file tools, search and git, never bash or download', async () => {
    const { name, workspace } = fresh()
    expect(workspace.descriptor).toEqual({ kind: 'browser', name })
    expect(workspace.capabilities).toEqual({
      read: true,
      write: true,
      exec: false,
      git: true,
      search: true,
      atomicRename: true,
      conditionalWrite: true,
      symlinks: false,
    })
    const session = await Agent.create().session(workspace)
    expect(session.toolNames()).toEqual([
      'read',
      'write',
      'edit',
      'patch',
      'ls',
      'search',
      'git',
      'web_fetch',
      'web_search',
      'batch',
      'program',
    ])
    expect(() => browserWorkspace({ name: '' })).toThrow(IsoagentError)
  })

  it('keeps files in IndexedDB: a second workspace of the same name sees them, another name does not', async () => {
    const { name, workspace } = fresh()
    await workspace.write(p('notes/a.txt'), enc.encode('persisted ✓\n'))
    await workspace.close!()
    await expect(workspace.read(p('notes/a.txt'))).rejects.toMatchObject({ code: 'io' })
    const again = fresh({}, name).workspace
    expect(dec.decode(await again.read(p('notes/a.txt')))).toBe('persisted ✓\n')
    const other = fresh().workspace
    expect(await other.stat(p('notes/a.txt'))).toBeUndefined()
  })

  it('is durable when a write returns: the saved superblock already holds the file', async () => {
    const { name, workspace } = fresh()
    await workspace.write(p('durable.txt'), enc.encode('x'))
    expect(await savedRootNames(name)).toEqual(['durable.txt'])
  })

  it('resumes a session from its snapshot on the same file system', async () => {
    const { name, workspace } = fresh()
    const agent = Agent.create()
    const session = await agent.session(workspace)
    await session.writeFile('r.txt', 'resumed\n')
    const snapshot = JSON.parse(JSON.stringify(session.snapshot()))
    expect(snapshot.workspace).toEqual({ kind: 'browser', name })
    await session.close()
    const resumed = await agent.resumeSession(snapshot)
    try {
      expect(await resumed.readFile('r.txt')).toContain('resumed')
    } finally {
      await resumed.close()
    }
  })

  it('changes the version on every write, even same size in the same millisecond', async () => {
    const { workspace } = fresh()
    const versions = new Set<string>()
    for (let i = 0; i < 20; i++) {
      const outcome = await workspace.write(p('v.txt'), enc.encode(String(i % 2)))
      expect((await workspace.stat(p('v.txt')))!.version).toBe(outcome.version)
      versions.add(outcome.version)
    }
    expect(versions.size).toBe(20)
    // Deleted and recreated with the same bytes: still a new version.
    const last = (await workspace.stat(p('v.txt')))!.version
    await workspace.remove(p('v.txt'))
    await workspace.write(p('v.txt'), enc.encode('1'))
    expect((await workspace.stat(p('v.txt')))!.version).not.toBe(last)
  })

  it('serialises conditional writes in the page: one wins, the others get version_conflict', async () => {
    const { workspace } = fresh()
    const { version } = await workspace.write(p('c.txt'), enc.encode('0'))
    const results = await Promise.allSettled(
      ['1', '2', '3', '4'].map((v) =>
        workspace.write(p('c.txt'), enc.encode(v), { precondition: { ifVersion: version } }),
      ),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'version_conflict' })
    expect(dec.decode(await workspace.read(p('c.txt')))).toBe('1')
    const created = await Promise.allSettled(
      ['a', 'b'].map((v) =>
        workspace.write(p('new.txt'), enc.encode(v), { precondition: { ifAbsent: true } }),
      ),
    )
    expect(created.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
  })

  it('two concurrent edits from two sessions: one succeeds, one gets version_conflict', async () => {
    const { workspace } = fresh()
    await workspace.write(p('race.txt'), enc.encode('alpha\nbeta\n'))
    // Both edits have read the file before either writes (a barrier after read), so the second
    // write finds a version it did not read.
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
    const results = await Promise.all([
      a!.tool('edit', { file_path: 'race.txt', old_string: 'alpha', new_string: 'ALPHA' }),
      b!.tool('edit', { file_path: 'race.txt', old_string: 'beta', new_string: 'BETA' }),
    ])
    expect(results.map((r) => r.exitCode).sort()).toEqual([0, 1])
    const failed = results.find((r) => r.exitCode === 1)!
    expect(failed.errorKind).toMatchObject({ type: 'version_conflict', path: 'race.txt' })
    const text = dec.decode(await workspace.read(p('race.txt')))
    expect(['ALPHA\nbeta\n', 'alpha\nBETA\n']).toContain(text)
  })

  it('never shows a replaced file as missing to concurrent readers', async () => {
    const { workspace } = fresh()
    await workspace.write(p('hot.txt'), enc.encode('v0'))
    let writing = true
    const writer = (async () => {
      for (let i = 1; i <= 30; i++) await workspace.write(p('hot.txt'), enc.encode(`v${i}`))
      writing = false
    })()
    const seen: string[] = []
    while (writing) {
      const [stat, bytes, page] = await Promise.all([
        workspace.stat(p('hot.txt')),
        workspace.read(p('hot.txt')),
        workspace.list(p('')),
      ])
      expect(stat?.kind).toBe('file')
      expect(page.entries.map((e) => e.name)).toContain('hot.txt')
      seen.push(dec.decode(bytes))
    }
    await writer
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.every((s) => /^v\d+$/.test(s))).toBe(true)
  })

  it('leaves no temp files and no orphaned data after overwrites, renames and removals', async () => {
    const { name, workspace } = fresh()
    for (let i = 0; i < 5; i++) await workspace.write(p('a/x.txt'), enc.encode(`x${i}`))
    await workspace.write(p('a/y.txt'), enc.encode('y'))
    await workspace.rename(p('a/y.txt'), p('a/x.txt')) // over an existing file
    await workspace.write(p('b/c/d.txt'), enc.encode('d'))
    await workspace.rename(p('b'), p('moved/b')) // a directory
    await workspace.write(p('gone/1.txt'), enc.encode('1'))
    await workspace.remove(p('gone'), { recursive: true })
    const tree = await treeOf(workspace)
    expect([...tree.keys()].sort()).toEqual(['a/x.txt', 'moved/b/c/d.txt'])
    expect(dec.decode(tree.get('a/x.txt'))).toBe('y')
    // One IndexedDB value per file, plus the superblock: no data left behind.
    expect((await rawKeys(name)).length).toBe(tree.size + 1)
  })

  it('refuses renames lightning-fs would get wrong', async () => {
    const { workspace } = fresh()
    await workspace.write(p('d/f.txt'), enc.encode('f'))
    await workspace.write(p('e/g.txt'), enc.encode('g'))
    await workspace.write(p('h.txt'), enc.encode('h'))
    await expect(workspace.rename(p('d'), p('d/sub'))).rejects.toMatchObject({
      code: 'invalid_argument',
    })
    await expect(workspace.rename(p('h.txt'), p('e'))).rejects.toMatchObject({
      code: 'is_directory',
    })
    await expect(workspace.rename(p('d'), p('e'))).rejects.toMatchObject({ code: 'not_empty' })
    await expect(workspace.rename(p('d'), p('h.txt'))).rejects.toMatchObject({
      code: 'not_directory',
    })
    await expect(workspace.rename(p('nope'), p('x'))).rejects.toMatchObject({ code: 'not_found' })
    expect([...(await treeOf(workspace)).keys()].sort()).toEqual(['d/f.txt', 'e/g.txt', 'h.txt'])
    // lightning-fs itself would write "under" a file; the workspace refuses.
    await expect(workspace.write(p('h.txt/x'), enc.encode('x'))).rejects.toMatchObject({
      code: 'not_directory',
    })
    await expect(
      workspace.write(p('new/x.txt'), enc.encode('x'), { createParents: false }),
    ).rejects.toMatchObject({ code: 'not_found' })
  })

  it('leaves no set-aside entry in the saved tree after an overwrite (a reload right after)', async () => {
    const { name, workspace } = fresh()
    await workspace.write(p('a.txt'), enc.encode('one\n'))
    await workspace.write(p('a.txt'), enc.encode('two\n'))
    // What a page reloaded now (before lightning-fs's own delayed save) would read.
    expect(await savedRootNames(name)).toEqual(['a.txt'])
    expect(dec.decode(await workspace.read(p('a.txt')))).toBe('two\n')
  })

  it('lists symlinks as symlinks and never follows them', async () => {
    const name = uniqueFsName()
    names.push(name)
    const lfs = new LightningFS(name)
    await lfs.promises.mkdir('/real')
    await lfs.promises.writeFile('/real/target.txt', enc.encode('secret\n'))
    await lfs.promises.symlink('real/target.txt', '/link.txt')
    await lfs.promises.symlink('real', '/dirlink')
    const { workspace } = fresh({ fs: lfs }, name)
    const page = await workspace.list(p(''))
    expect(page.entries).toEqual([
      { name: 'dirlink', kind: 'symlink' },
      { name: 'link.txt', kind: 'symlink' },
      { name: 'real', kind: 'directory' },
    ])
    expect(await workspace.stat(p('link.txt'))).toMatchObject({ kind: 'symlink', size: 0 })
    for (const path of ['link.txt', 'dirlink/target.txt']) {
      await expect(workspace.read(p(path))).rejects.toMatchObject({ code: 'unsupported' })
      await expect(workspace.write(p(path), enc.encode('x'))).rejects.toMatchObject({
        code: 'unsupported',
      })
    }
    await expect(workspace.list(p('dirlink'))).rejects.toMatchObject({ code: 'unsupported' })

    const session = await Agent.create().session(workspace)
    expect((await session.ls()).output).toBe('dirlink@\nlink.txt@\nreal/')
    const read = await session.tool('read', { file_path: 'link.txt' })
    expect(read.errorKind).toMatchObject({ type: 'unsupported' })
    expect(read.output).not.toContain('secret')
    const grep = await session.tool('search', { mode: 'grep', query: 'secret' })
    expect(grep.output).toContain('real/target.txt')
    expect(grep.output).toBe('real/target.txt:1:secret')
    expect(await session.glob('**/*.txt')).toEqual(['real/target.txt'])

    await workspace.remove(p('link.txt')) // the link goes, its target stays
    expect(dec.decode(await workspace.read(p('real/target.txt')))).toBe('secret\n')
    // The lightning-fs instance was passed in: closing the workspace leaves it usable.
    await workspace.close!()
    expect(await lfs.promises.readdir('/')).toContain('real')
    await (lfs.promises as unknown as { _deactivate(): Promise<void> })._deactivate()
  })

  it('reports a full quota as io "storage quota exceeded" and leaves nothing behind', async () => {
    const name = uniqueFsName()
    names.push(name)
    const lfs = new LightningFS(name)
    const quota = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError')
    // IndexedDB refuses values over 1 KiB, the way a full origin does: lightning-fs has added
    // the entry to its tree when the put of the data fails.
    await lfs.promises.stat('/')
    const idb = (lfs.promises as unknown as { _backend: { _idb: LfsIdb } })._backend._idb
    const put = idb.writeFile.bind(idb)
    idb.writeFile = async (inode, data) => {
      if (data.length > 1024) throw quota()
      return put(inode, data)
    }
    const { workspace } = fresh({ fs: lfs }, name)
    await workspace.write(p('keep.txt'), enc.encode('old\n'))
    const before = await treeOf(workspace)

    await expect(workspace.write(p('keep.txt'), new Uint8Array(4096))).rejects.toMatchObject({
      code: 'io',
      message: expect.stringContaining('storage quota exceeded'),
    })
    await expect(workspace.write(p('dir/new.bin'), new Uint8Array(4096))).rejects.toMatchObject({
      code: 'io',
    })
    const session = await Agent.create().session(workspace)
    const r = await session.tool('write', { file_path: 'keep.txt', content: 'x'.repeat(5000) })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind).toMatchObject({ type: 'transport' })
    expect(r.output).toContain('storage quota exceeded')
    expect(await treeOf(workspace)).toEqual(before)
    // No temp file, and not the directory made for dir/new.bin either.
    expect((await workspace.list(p(''))).entries.map((e) => e.name)).toEqual(['keep.txt'])

    // A quota error while saving the superblock undoes the swap: the old bytes stay.
    const flush = lfs.promises.flush.bind(lfs.promises)
    lfs.promises.flush = async () => {
      lfs.promises.flush = flush
      throw quota()
    }
    await expect(workspace.write(p('keep.txt'), enc.encode('new\n'))).rejects.toMatchObject({
      code: 'io',
      message: expect.stringContaining('storage quota exceeded'),
    })
    expect(dec.decode(await workspace.read(p('keep.txt')))).toBe('old\n')
    expect((await workspace.list(p(''))).entries.map((e) => e.name)).toEqual(['keep.txt'])
    await session.close()
    await (lfs.promises as unknown as { _deactivate(): Promise<void> })._deactivate()
  })
})
