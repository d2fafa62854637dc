import { IsoagentError, type GitSignature } from '../../../src/index.ts'
import { decoder, who } from './common.ts'
import type { GitRunner } from './runner.ts'

/** `GitBackend.stashList`. */
export async function stashList(git: GitRunner): Promise<string[]> {
  const r = await git.run(['stash', 'list', '--format=%gs'])
  if (r.code !== 0) return []
  return decoder
    .decode(r.stdout)
    .split('\n')
    .filter((l) => l.length > 0)
}

/** `GitBackend.stashPush`: `stash create`, `stash store`, `reset --hard`. */
export async function stashPush(
  git: GitRunner,
  message: string,
  signature: GitSignature,
): Promise<string> {
  const env = who(signature)
  const oid = decoder.decode(await git.ok(['stash', 'create'], { env })).trim()
  if (oid === '') throw new IsoagentError('invalid_argument', 'No local changes to save')
  await git.ok(['stash', 'store', '-m', message, oid], { env, changes: true })
  await git.ok(['reset', '--hard', '-q'], { env, changes: true })
  return oid
}

/** `GitBackend.stashPop`. */
export async function stashPop(git: GitRunner): Promise<string> {
  const oid = (await git.text(['rev-parse', '-q', '--verify', 'refs/stash'])).trim()
  const r = await git.run(['stash', 'pop', '-q'], { changes: true })
  if (r.code !== 0) {
    const files = [...r.stderr.matchAll(/^\t(.+)$/gm)].map((m) => m[1]!)
    throw new IsoagentError(
      'version_conflict',
      `stash pop refused: local changes to ${files.join(', ') || 'some files'} would be overwritten; commit or stash them first`,
      { data: { path: files[0] ?? '', expected: 'clean', actual: 'modified', paths: files } },
    )
  }
  return oid
}
