import type { GitCommit } from '../../../src/index.ts'
import { splitNul } from './common.ts'
import type { GitRunner } from './runner.ts'

/** `GitBackend.log`: one `git log -z` with a field format, parsed. */
export async function log(
  git: GitRunner,
  start: string,
  skip: number,
  limit: number,
): Promise<GitCommit[]> {
  const format = '%H%x00%P%x00%an%x00%ae%x00%at%x00%ai%x00%cn%x00%ce%x00%ct%x00%ci%x00%B'
  const fields = splitNul(
    await git.ok([
      'log',
      '-z',
      `--format=${format}`,
      `--skip=${skip}`,
      `-n${limit}`,
      '--end-of-options',
      start,
      '--',
    ]),
  )
  const out: GitCommit[] = []
  const tzOf = (iso: string) => iso.slice(-5)
  for (let i = 0; i + 10 < fields.length + 1; i += 11) {
    const f = fields.slice(i, i + 11)
    if (f.length < 10) break
    out.push({
      oid: f[0]!,
      parents: f[1] === '' ? [] : f[1]!.split(' '),
      author: { name: f[2]!, email: f[3]!, timestamp: Number(f[4]), tz: tzOf(f[5]!) },
      committer: { name: f[6]!, email: f[7]!, timestamp: Number(f[8]), tz: tzOf(f[9]!) },
      message: (f[10] ?? '').replace(/\n+$/, ''),
    })
  }
  return out
}
