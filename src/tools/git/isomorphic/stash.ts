import * as git from 'isomorphic-git'
import { IsoagentError } from '../../../errors.ts'
import type { GitSignature } from '../../../workspace/git-backend.ts'
import { compareBytes, offsetOfTz } from '../git-text.ts'
import { encoder, isNotFound, ZERO_OID, type FileMap, type RepoContext } from './context.ts'

const stashLog = (repo: RepoContext) => `${repo.gitdir}/logs/refs/stash`

/** `GitBackend.stashList`: stash messages, newest first. */
export async function stashList(repo: RepoContext): Promise<string[]> {
  const text = await repo.readText(stashLog(repo))
  if (text === undefined) return []
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => line.slice(line.indexOf('\t') + 1))
    .reverse()
}

/** `GitBackend.stashPush`: save tracked changes as a stash entry and reset them to HEAD. */
export async function stashPush(
  repo: RepoContext,
  message: string,
  indexMessage: string,
  who: GitSignature,
): Promise<string> {
  const head = await repo.headOid()
  if (head === null) throw new IsoagentError('invalid_argument', 'no commit to stash on')
  const headFiles = await repo.treeFiles(head)
  const index = await repo.filesOf(git.STAGE())
  const work: FileMap = new Map()
  for (const [path, entry] of index) {
    const data = await repo.workFile(path)
    if (data === undefined) continue
    work.set(path, { oid: await git.writeBlob({ ...repo.base(), blob: data }), mode: entry.mode })
  }
  const person = {
    name: who.name,
    email: who.email,
    timestamp: who.timestamp,
    timezoneOffset: offsetOfTz(who.tz),
  }
  const writeCommit = async (text: string, files: FileMap, parent: string[]) =>
    git.writeCommit({
      ...repo.base(),
      commit: {
        message: `${text}\n`,
        tree: await repo.writeTreeOf(files),
        parent,
        author: person,
        committer: person,
      },
    })
  const indexCommit = await writeCommit(indexMessage, index, [head])
  const stash = await writeCommit(message, work, [head, indexCommit])
  await recordStash(repo, stash, message, who)
  await resetStashed(repo, head, headFiles, index, work)
  repo.invalidate()
  return stash
}

/** Point `refs/stash` at `stash` and append its reflog line. */
async function recordStash(
  repo: RepoContext,
  stash: string,
  message: string,
  who: GitSignature,
): Promise<void> {
  let previous = ZERO_OID
  try {
    previous = await git.resolveRef({ ...repo.base(), ref: 'refs/stash' })
  } catch (error) {
    if (!isNotFound(error)) throw error
  }
  await git.writeRef({ ...repo.base(), ref: 'refs/stash', value: stash, force: true })
  const log = (await repo.readText(stashLog(repo))) ?? ''
  await repo.writeWorkFile(
    '.git/logs/refs/stash',
    encoder.encode(
      `${log}${previous} ${stash} ${who.name} <${who.email}> ${who.timestamp} ${who.tz}\t${message}\n`,
    ),
  )
}

/** Reset the stashed paths (index and working tree) to HEAD. */
async function resetStashed(
  repo: RepoContext,
  head: string,
  headFiles: FileMap,
  index: FileMap,
  work: FileMap,
): Promise<void> {
  const touched = new Set<string>()
  for (const [path, entry] of index) {
    const h = headFiles.get(path)
    const w = work.get(path)
    if (h === undefined || h.oid !== entry.oid || w === undefined || w.oid !== h.oid)
      touched.add(path)
  }
  for (const path of headFiles.keys()) if (!index.has(path)) touched.add(path)
  for (const path of [...touched].sort(compareBytes)) {
    const h = headFiles.get(path)
    if (h === undefined) await repo.removeWorkFile(path)
    else await repo.writeWorkFile(path, await repo.readBlob(h.oid))
    await git.resetIndex({ ...repo.base(), filepath: path, ref: head })
  }
}

/** `GitBackend.stashPop`: apply `stash@{0}` to the working tree and drop it. */
export async function stashPop(repo: RepoContext): Promise<string> {
  const stash = await git.resolveRef({ ...repo.base(), ref: 'refs/stash' })
  const { commit } = await git.readCommit({ ...repo.base(), oid: stash })
  const [baseOid, indexOid] = commit.parent
  if (baseOid === undefined || indexOid === undefined) {
    throw new IsoagentError('unsupported', `stash@{0} (${stash}) is not a git stash commit`)
  }
  const baseFiles = await repo.treeFiles(baseOid)
  const indexFiles = await repo.treeFiles(
    (await git.readCommit({ ...repo.base(), oid: indexOid })).oid,
  )
  const stashFiles = await repo.treeFiles(stash)
  const changed = new Set<string>()
  for (const [path, entry] of stashFiles)
    if (baseFiles.get(path)?.oid !== entry.oid) changed.add(path)
  for (const path of baseFiles.keys()) if (!stashFiles.has(path)) changed.add(path)
  await refuseLocalChanges(repo, changed, baseFiles)
  for (const path of [...changed].sort(compareBytes)) {
    const entry = stashFiles.get(path)
    if (entry === undefined) {
      await repo.removeWorkFile(path)
      if (!indexFiles.has(path)) await git.remove({ ...repo.base(), filepath: path })
      continue
    }
    await repo.writeWorkFile(path, await repo.readBlob(entry.oid))
    if (!baseFiles.has(path) && indexFiles.has(path))
      await git.add({ ...repo.base(), filepath: path })
  }
  await dropTopStash(repo)
  repo.invalidate()
  return stash
}

/** Refuse (changing nothing) when a path the stash changes has local changes. */
async function refuseLocalChanges(
  repo: RepoContext,
  changed: Set<string>,
  baseFiles: FileMap,
): Promise<void> {
  const current = await repo.filesOf(git.STAGE())
  const blocked: string[] = []
  for (const path of changed) {
    const b = baseFiles.get(path)
    const data = await repo.workFile(path)
    const inIndex = current.get(path)
    if (b === undefined) {
      if (data !== undefined || inIndex !== undefined) blocked.push(path)
      continue
    }
    const workOid =
      data === undefined ? undefined : await git.hashBlob({ object: data }).then((h) => h.oid)
    if (inIndex?.oid !== b.oid || workOid !== b.oid) blocked.push(path)
  }
  if (blocked.length === 0) return
  blocked.sort(compareBytes)
  throw new IsoagentError(
    'version_conflict',
    `stash pop refused: local changes to ${blocked.join(', ')} would be overwritten; commit or stash them first`,
    { data: { path: blocked[0], expected: 'clean', actual: 'modified', paths: blocked } },
  )
}

/** Drop `stash@{0}`: the previous entry becomes `refs/stash`, or the ref goes. */
async function dropTopStash(repo: RepoContext): Promise<void> {
  const log = ((await repo.readText(stashLog(repo))) ?? '')
    .split('\n')
    .filter((line) => line.length > 0)
  log.pop()
  const last = log[log.length - 1]
  if (last === undefined) {
    await git.deleteRef({ ...repo.base(), ref: 'refs/stash' })
    await repo.fs.promises.unlink(stashLog(repo)).catch(() => undefined)
  } else {
    await git.writeRef({
      ...repo.base(),
      ref: 'refs/stash',
      value: last.split(' ')[1]!,
      force: true,
    })
    await repo.fs.promises.writeFile(stashLog(repo), `${log.join('\n')}\n`)
  }
}
