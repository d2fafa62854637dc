// The projection scenario: the same inputs projected under the same policies, through the public
// `isoagent` entry only, in Node (directly) and in workerd (bundled into a Worker). The inputs are
// generated here, deterministically, so both runtimes build identical strings; the record is
// plain JSON and must be equal, byte for byte, between the runs.
import {
  Agent,
  ToolResultTransformPolicy,
  memoryWorkspace,
  projectOutput,
  type CustomTool,
  type ToolResultEvidenceV1,
  type ToolResultTransformPolicyV1,
} from '../../adapters/index.ts'

/** One input projected under one policy. */
export interface ProjectionCase {
  input: string
  policy: string
  /** The projected output, as returned. */
  output: string
  /** Lowercase hex SHA-256 of the output's UTF-8 bytes, computed in the runtime itself. */
  outputSha256: string
  evidence: ToolResultEvidenceV1
  /** Lowercase hex SHA-256 of the artifact bytes, when the projection lost data. */
  artifactSha256: string | null
  artifactUri: string | null
}

/** What {@link runProjectionScenario} returns. */
export interface ProjectionRecord {
  cases: ProjectionCase[]
  /** The same projection through a session (custom tool), with the stored artifact's digest. */
  session: {
    output: string
    evidence: ToolResultEvidenceV1
    artifactSha256: string | null
  }[]
}

export const POLICIES: Record<string, ToolResultTransformPolicyV1> = {
  conservative: ToolResultTransformPolicy.conservative(),
  contextEfficient: ToolResultTransformPolicy.contextEfficient(),
  // A small head-only policy and a small head + tail policy: the cut points move.
  compat1k: {
    ...ToolResultTransformPolicy.conservative(),
    max_output_bytes: 1024,
    head_bytes: 1024,
  },
  small: {
    ...ToolResultTransformPolicy.contextEfficient(),
    max_output_bytes: 4096,
    head_bytes: 2000,
    tail_bytes: 1000,
    repeated_line_threshold: 2,
    structured_sample_items: 10,
  },
}

/** The inputs, by name. */
export function projectionInputs(): Record<string, string> {
  const uniqueLines: string[] = []
  for (let i = 0; i < 6000; i++) uniqueLines.push(`line ${i}: ${'x'.repeat(i % 50)}`)

  // 1 MB of repetitive text: runs of identical lines between unique ones.
  const repetitive: string[] = []
  let bytes = 0
  for (let i = 0; bytes < 1_000_000; i++) {
    const block = `block ${i}\n` + `the same line, over and over again\n`.repeat(3 + (i % 5))
    repetitive.push(block)
    bytes += block.length
  }
  const json = Array.from({ length: 10_000 }, (_, i) => ({
    id: i,
    name: `item-${i}`,
    score: (i * 37) % 101,
    tags: i % 3 === 0 ? ['a', 'b'] : [],
  }))
  const unit = 'aé€😀漢𝄞\n'
  return {
    'within cap': 'hello, world\n',
    'unique lines': uniqueLines.join('\n'),
    '1 MB repetitive text': repetitive.join(''),
    '1 MB of one line': 'spam\n'.repeat(200_000),
    'JSON array of 10,000 items': JSON.stringify(json),
    'JSON array of 10,000 items, pretty': JSON.stringify(json, null, 2),
    'multi-byte text': unit.repeat(12_000),
    'multi-byte text, shifted': 'ab' + unit.repeat(12_000) + '😀',
    emoji: '👩‍💻🎉😀'.repeat(20_000),
    'lone surrogates at the cuts': 'a'.repeat(65534) + '\uD800' + 'b'.repeat(50_000) + '\uDFFF',
  }
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('')
}

const encoder = new TextEncoder()
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

/** Project every input under every policy, and a few through a session. */
export async function runProjectionScenario(): Promise<ProjectionRecord> {
  const inputs = projectionInputs()
  const cases: ProjectionCase[] = []
  for (const [name, input] of Object.entries(inputs)) {
    for (const [policyName, policy] of Object.entries(POLICIES)) {
      const p = await projectOutput('tool', input, policy)
      cases.push({
        input: name,
        policy: policyName,
        output: p.output,
        outputSha256: await sha256(encoder.encode(p.output)),
        evidence: plain(p.evidence),
        artifactSha256: p.artifact === undefined ? null : await sha256(p.artifact.bytes),
        artifactUri: p.artifact?.uri ?? null,
      })
    }
  }

  let next = ''
  const tool: CustomTool = {
    name: 'dump',
    description: 'returns a prepared output',
    parameters: { type: 'object', additionalProperties: false, properties: {} },
    run: () => next,
  }
  const session: ProjectionRecord['session'] = []
  for (const policy of [POLICIES.conservative!, POLICIES.contextEfficient!]) {
    const s = await Agent.create().session(memoryWorkspace(), {
      tools: [tool],
      toolResultTransformPolicy: policy,
    })
    for (const name of ['unique lines', '1 MB repetitive text', 'JSON array of 10,000 items']) {
      next = inputs[name]!
      const r = await s.tool('dump', {})
      const evidence = r.metadata?.a3s_tool_result_evidence as ToolResultEvidenceV1
      const artifact = await s.getArtifact(evidence.content_ref)
      session.push({
        output: r.output,
        evidence: plain(evidence),
        artifactSha256: artifact === undefined ? null : await sha256(artifact),
      })
    }
  }
  return { cases, session }
}
