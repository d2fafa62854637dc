// Result projection in workerd (through Miniflare): the core + memory workspace bundled with Node
// built-ins forbidden, projecting the same inputs under the same policies as Node. Outputs and
// evidence must be identical byte for byte.
import { createHash } from 'node:crypto'
import { runInWorkerd, type WorkerdRun } from './workerd-runner.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  POLICIES,
  projectionInputs,
  runProjectionScenario,
  type ProjectionRecord,
} from './projection-scenario.ts'

const WORKER = `
import { runProjectionScenario } from './projection-scenario.ts'

export default {
  async fetch() {
    try {
      const record = await runProjectionScenario()
      return Response.json({ userAgent: navigator.userAgent, record })
    } catch (error) {
      return new Response(String(error && error.stack ? error.stack : error), { status: 500 })
    }
  },
}
`

const sha = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')

describe('projection in workerd (Miniflare)', () => {
  let run: WorkerdRun<ProjectionRecord> | undefined
  let userAgent: string
  let inWorkerd: ProjectionRecord
  let inNode: ProjectionRecord

  beforeAll(async () => {
    run = await runInWorkerd<ProjectionRecord>(WORKER, '/projection')
    userAgent = run.userAgent
    inWorkerd = run.record
    inNode = JSON.parse(JSON.stringify(await runProjectionScenario())) as ProjectionRecord
  })

  afterAll(async () => {
    await run?.dispose()
  })

  it('ran inside workerd', () => {
    expect(userAgent).toBe('Cloudflare-Workers')
  })

  it('projects every input under every policy', () => {
    const names = Object.keys(projectionInputs())
    const expected = names.flatMap((input) =>
      Object.keys(POLICIES).map((policy) => ({ input, policy })),
    )
    expect(inWorkerd.cases.map(({ input, policy }) => ({ input, policy }))).toEqual(expected)
    expect(inNode.cases.map(({ input, policy }) => ({ input, policy }))).toEqual(expected)
  })

  it('produces byte-identical outputs and evidence to Node', () => {
    for (const [i, w] of inWorkerd.cases.entries()) {
      const n = inNode.cases[i]!
      const label = `${w.input} / ${w.policy}`
      expect(Buffer.from(w.output, 'utf8').equals(Buffer.from(n.output, 'utf8')), label).toBe(true)
      expect(w.outputSha256, label).toBe(n.outputSha256)
      expect(w.evidence, label).toEqual(n.evidence)
      expect(JSON.stringify(w.evidence), label).toBe(JSON.stringify(n.evidence))
      expect(w.artifactSha256, label).toBe(n.artifactSha256)
      expect(w.artifactUri, label).toBe(n.artifactUri)
    }
    expect(inWorkerd.session).toEqual(inNode.session)
    expect(inWorkerd).toEqual(inNode)
  })

  it('keeps the projection facts in workerd', () => {
    const inputs = projectionInputs()
    const modes = new Set<string>()
    for (const c of inWorkerd.cases) {
      const label = `${c.input} / ${c.policy}`
      const policy = POLICIES[c.policy]!
      const input = inputs[c.input]!
      const outBytes = Buffer.from(c.output, 'utf8')
      modes.add(c.evidence.loss_mode)
      // Digests computed in the worker (crypto.subtle) equal node:crypto's.
      expect(c.outputSha256, label).toBe(sha(c.output))
      expect(c.evidence.projected_digest, label).toBe(`sha256:${sha(c.output)}`)
      expect(c.evidence.content_digest, label).toBe(`sha256:${sha(input)}`)
      expect(c.evidence.projected_bytes, label).toBe(outBytes.length)
      expect(outBytes.length, label).toBeLessThanOrEqual(policy.max_output_bytes)
      // No cut split a character: the output decodes strictly.
      expect(new TextDecoder('utf-8', { fatal: true }).decode(outBytes), label).toBe(c.output)
      if (c.evidence.loss_mode === 'none') {
        expect(c.output, label).toBe(input)
        expect(c.artifactSha256, label).toBeNull()
      } else {
        expect(c.artifactSha256, label).toBe(sha(input))
        expect(c.evidence.content_ref, label).toBe(`a3s://tool-output/tool/${sha(input)}`)
      }
    }
    expect([...modes].sort()).toEqual([
      'bounded_preview',
      'composite',
      'deterministic_transform',
      'head_tail',
      'none',
    ])
    const pick = (input: string, policy: string) =>
      inWorkerd.cases.find((c) => c.input === input && c.policy === policy)!
    expect(pick('JSON array of 10,000 items', 'contextEfficient').evidence).toMatchObject({
      loss_mode: 'deterministic_transform',
      transform_algorithm: 'a3s.json-array-sample/v1',
    })
    expect(pick('1 MB of one line', 'contextEfficient').output).toBe(
      'spam\n[a3s: previous line repeated 199999 more times]\n',
    )
    expect(pick('1 MB repetitive text', 'contextEfficient').evidence.loss_mode).toBe('composite')
    for (const s of inWorkerd.session) {
      expect(s.artifactSha256).toBe(
        s.evidence.loss_mode === 'none' ? null : s.evidence.content_digest.slice(7),
      )
    }
  })
})
