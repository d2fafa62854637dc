import { commonPrefix, ZERO_OID } from './common.ts'
import type { GitRunner } from './runner.ts'

/** Objects whose ids start with any of `prefixes` (4 digits or more), by `rev-parse`. */
async function objectsStartingWith(git: GitRunner, prefixes: string[]): Promise<string[]> {
  const out: string[] = []
  for (let i = 0; i < prefixes.length; i += 1000) {
    const args = prefixes.slice(i, i + 1000).map((p) => `--disambiguate=${p}`)
    const listed = await git.text(['rev-parse', ...args])
    for (const line of listed.split('\n')) if (line.length > 0) out.push(line)
  }
  return out
}

/** How far the objects near `probe` would extend its abbreviation (0: not past 4 digits). */
const extension = (probe: string, objects: string[]) =>
  objects.reduce((n, other) => Math.max(n, commonPrefix(probe, other) + 1), 0)

/**
 * git's abbreviations of `oids`. git shows its minimum length (`core.abbrev`, or auto from the
 * object count) only through `rev-parse --short`, which also extends it past near objects: the
 * all-zero id, whose near objects `--disambiguate` lists in the same call as those of `oids`,
 * yields the minimum unless an object starts with as many zeros (then the all-`f` id is asked
 * too). Each oid is then extended past the objects that share its first digits, as git does.
 */
export async function abbreviate(git: GitRunner, oids: readonly string[]): Promise<string[]> {
  if (oids.length === 0) return []
  const shortest = async (probe: string) =>
    (await git.text(['rev-parse', '--short', probe])).trim().length
  const prefixesOf = (n: number) => [...new Set(oids.map((oid) => oid.slice(0, n)))]
  let minimum = await shortest(ZERO_OID)
  if (minimum >= 40) return [...oids]
  let objects = await objectsStartingWith(git, ['0000', ...prefixesOf(minimum)])
  if (extension(ZERO_OID, objects) >= minimum) {
    const last = 'f'.repeat(40)
    minimum = Math.min(minimum, await shortest(last))
    objects = await objectsStartingWith(git, prefixesOf(minimum))
  }
  return oids.map((oid) => {
    let length = minimum
    for (const other of objects) {
      if (other === oid || !other.startsWith(oid.slice(0, minimum))) continue
      const common = commonPrefix(oid, other)
      // git stops extending at 32 common digits (GIT_MAX_RAWSZ).
      if (common < 32 && common >= length) length = common + 1
    }
    return oid.slice(0, length)
  })
}
