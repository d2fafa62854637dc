// Skills: loading a registry of 1,000 skills and searching it.
//
//   1. Registry load — `SkillRegistry.load` over a workspace whose `.agents/skills/` holds 1,000
//      `<name>/SKILL.md` folders, against the least work that yields the same front matter:
//      list the folder (paging) and read each SKILL.md's head with the same concurrency (one),
//      through the same workspace. Local disk and s3rver (S3 on loopback).
//   2. Front matter of those 1,000 skills: the plain `key: value` fast path against the YAML
//      library on the same blocks (the library was most of a load's time).
//   3. `search_skills` over those 1,000 skills: p50/p99 of `session.tool('search_skills', …)`
//      against the scoring alone (`rankSkills` over the same entries).
//
// Whole-operation timing as bench/s3.ts: each side once untimed, then ROUNDS rounds alternating
// which goes first; medians and the median of per-round ratios.
//
//   npx tsx bench/skills.ts        (SKILLS_BENCH_ROUNDS=n, SKILLS_BENCH_COUNT=n)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Agent, WorkspacePath, type WorkspaceServices } from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node/index.ts'
import { s3Workspace } from '../adapters/s3/index.ts'
import { parse as parseYaml } from 'yaml'
import { plainFrontMatter } from '../src/skills/plain-front-matter.ts'
import { SkillRegistry } from '../src/skills/skill-registry.ts'
import { rankSkills } from '../src/skills/search-skills.ts'
import { seed, startS3rver } from '../test/s3/server.ts'
import { machineLine, median } from './harness.ts'

const ROUNDS = Number(process.env.SKILLS_BENCH_ROUNDS ?? 5)
const COUNT = Number(process.env.SKILLS_BENCH_COUNT ?? 1000)
const WORDS = ['git', 'lint', 'deploy', 'review', 'test', 'docs', 'release', 'db', 'api', 'perf']

function skillFile(i: number): string {
  const a = WORDS[i % WORDS.length]!
  const b = WORDS[(i * 7) % WORDS.length]!
  return `---\nname: skill-${i}\ndescription: Helps with ${a} and ${b} work, variant ${i}.\ntags: [${a}, ${b}]\nallowed-tools: Read, Bash(${a}:*)\n---\n# Skill ${i}\n\nSteps for ${a} then ${b}.\n${'More detail. '.repeat(40)}\n`
}

const files = Object.fromEntries(
  Array.from({ length: COUNT }, (_, i) => [`.agents/skills/skill-${i}/SKILL.md`, skillFile(i)]),
)

/** The peer: list `.agents/skills`, then each folder, then read each SKILL.md's head. */
async function listAndRead(ws: WorkspaceServices): Promise<number> {
  let bytes = 0
  const root = WorkspacePath.parse('.agents/skills')
  let after: string | undefined
  do {
    const page = await ws.list(root, after !== undefined ? { after } : {})
    for (const entry of page.entries) {
      const dir = WorkspacePath.child(root, entry.name)
      await ws.list(dir)
      const file = WorkspacePath.child(dir, 'SKILL.md')
      await ws.stat(file)
      bytes += (await ws.read(file, { offset: 0, length: 69_632 })).length
    }
    after = page.next
  } while (after !== undefined)
  return bytes
}

async function timeBoth(ours: () => Promise<unknown>, peer: () => Promise<unknown>) {
  await ours()
  await peer()
  const o: number[] = []
  const p: number[] = []
  const ratios: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const first = r % 2 === 0
    const time = async (f: () => Promise<unknown>) => {
      const t = performance.now()
      await f()
      return performance.now() - t
    }
    const a = first ? await time(ours) : 0
    const b = await time(peer)
    const c = first ? a : await time(ours)
    o.push(c)
    p.push(b)
    ratios.push(c / b)
  }
  return { ours: median(o), peer: median(p), ratio: median(ratios) }
}

async function loadRow(name: string, ws: WorkspaceServices) {
  const registry = await SkillRegistry.load(ws)
  if (registry.all().length !== COUNT) throw new Error(`${name}: found ${registry.all().length}`)
  const t = await timeBoth(
    () => SkillRegistry.load(ws),
    () => listAndRead(ws),
  )
  return `| registry load, ${COUNT} skills, ${name} | ${t.ours.toFixed(0)} | ${t.peer.toFixed(0)} | ${t.ratio.toFixed(2)}× |`
}

async function frontMatterRow() {
  const blocks = Object.values(files).map((t) => /^---\n([\s\S]*?)\n---/.exec(t)![1]!)
  if (blocks.some((b) => plainFrontMatter(b) === undefined)) throw new Error('not all plain')
  const t = await timeBoth(
    async () => blocks.map((b) => plainFrontMatter(b)),
    async () => blocks.map((b) => parseYaml(b, { maxAliasCount: 100 })),
  )
  return `| front matter of ${COUNT} skills: fast path vs yaml library | ${t.ours.toFixed(1)} | ${t.peer.toFixed(1)} | ${t.ratio.toFixed(2)}× |`
}

async function searchRow(ws: WorkspaceServices) {
  const session = await Agent.create().session(ws)
  const registry = await SkillRegistry.load(ws)
  const pool = registry.discoverable().map((e) => ({ skill: e.skill, body: e.bodyHead ?? '' }))
  const queries = ['release notes from git', 'lint the api', 'deploy perf review', 'docs']
  const ours: number[] = []
  const peer: number[] = []
  for (let i = 0; i < 400; i++) {
    const q = queries[i % queries.length]!
    let t = performance.now()
    const r = await session.tool('search_skills', { query: q, limit: 10 })
    ours.push(performance.now() - t)
    if (r.exitCode !== 0) throw new Error(r.output)
    t = performance.now()
    rankSkills(pool, q, 10)
    peer.push(performance.now() - t)
  }
  const sorted = [...ours].sort((a, b) => a - b)
  const p99 = sorted[Math.floor(sorted.length * 0.99)]!
  await session.close()
  return `| search_skills over ${COUNT} skills (p50; p99 ${p99.toFixed(2)} ms) | ${median(ours).toFixed(2)} | ${median(peer).toFixed(2)} | ${(median(ours) / median(peer)).toFixed(2)}× |`
}

const dir = mkdtempSync(join(tmpdir(), 'isoagent-bench-skills-'))
for (const [path, text] of Object.entries(files)) {
  mkdirSync(join(dir, path, '..'), { recursive: true })
  writeFileSync(join(dir, path), text)
}
const s3 = await startS3rver(['isoagent-bench-skills'])
const client = s3.client()
try {
  await seed(client, 'isoagent-bench-skills', 'ws/', files)
  const local = localWorkspace(dir)
  const bucket = s3Workspace({ bucket: 'isoagent-bench-skills', prefix: 'ws/', client })
  const rows = [
    await loadRow('local disk', local),
    await loadRow('s3rver', bucket),
    await frontMatterRow(),
    await searchRow(local),
  ]
  console.log(machineLine())
  console.log('| operation | ours ms | peer ms | ratio |\n| --- | ---: | ---: | ---: |')
  for (const row of rows) console.log(row)
  console.log(
    'peer: list + stat + head read of each SKILL.md (load); the yaml library (front matter); rankSkills alone (search)',
  )
} finally {
  await s3.close()
  rmSync(dir, { recursive: true, force: true })
}
