import { sha256Hex, utf8, utf8Length } from '../text/bytes.ts'
import { utf8SafeHeadLength, utf8SafeTailStart } from '../text/preview.ts'
import { MARKER_RESERVE_BYTES, type ToolResultTransformPolicyV1 } from './policy.ts'

/** Schema id of the evidence attached to every result. */
export const EVIDENCE_SCHEMA = 'a3s.code.tool-result-evidence.v1'
/** Token estimate used in evidence: UTF-8 bytes divided by 4, rounded up. */
export const TOKEN_ESTIMATOR = 'utf8-bytes-ceil-div-4/v1'

/** How much a projection lost. */
export type LossMode =
  'none' | 'bounded_preview' | 'head_tail' | 'deterministic_transform' | 'composite'

/** `a3s.code.tool-result-evidence.v1`, at `metadata.a3s_tool_result_evidence` of every result. */
export interface ToolResultEvidenceV1 {
  schema: typeof EVIDENCE_SCHEMA
  original_bytes: number
  projected_bytes: number
  original_estimated_tokens: number
  projected_estimated_tokens: number
  token_estimator: typeof TOKEN_ESTIMATOR
  content_digest: string
  projected_digest: string
  /** `projected_bytes - original_bytes` (≤ 0). */
  byte_delta: number
  /** `projected_estimated_tokens - original_estimated_tokens` (≤ 0). */
  estimated_token_delta: number
  /** Same tool and same original content give the same key. */
  repeat_key: string
  /** `inline:sha256:…` when lossless, else the `a3s://tool-output/<tool>/<sha256>` artifact. */
  content_ref: string
  transform_algorithm: string
  loss_mode: LossMode
}

/** A projected output, its evidence, and the original to store when the projection lost data. */
export interface Projection {
  output: string
  evidence: ToolResultEvidenceV1
  artifact?: { uri: string; bytes: Uint8Array }
}

const ALGORITHMS = {
  sample: 'a3s.json-array-sample/v1',
  fold: 'a3s.fold-repeated-lines/v1',
  headTail: 'a3s.utf8-head-tail/v1',
  head: 'a3s.utf8-head/v1',
} as const

const tokens = (bytes: number) => Math.ceil(bytes / 4)
const decoder = new TextDecoder('utf-8', { ignoreBOM: true })

/** The artifact URI of an output of `tool` with sha256 `digestHex`. */
export function artifactUri(tool: string, digestHex: string): string {
  return `a3s://tool-output/${encodeURIComponent(tool)}/${digestHex}`
}

/** Keep `n` evenly spaced items of a top-level JSON array (first and last included). */
function sampleJsonArray(text: string, n: number): string | undefined {
  const trimmed = text.trim()
  if (!trimmed.startsWith('[') || !trimmed.endsWith(']')) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(trimmed)
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed) || parsed.length <= n) return undefined
  const picked: unknown[] = []
  for (let i = 0; i < n; i++)
    picked.push(parsed[n === 1 ? 0 : Math.floor((i * (parsed.length - 1)) / (n - 1))])
  const pretty = /^\[\s*\n/.test(trimmed)
  const body = pretty ? JSON.stringify(picked, null, 2) : JSON.stringify(picked)
  return `${body}\n[a3s: sampled ${n} of ${parsed.length} items of a top-level JSON array, evenly spaced]`
}

/** Fold runs of at least `threshold` identical lines into the line and a count. */
function foldRepeatedLines(text: string, threshold: number): string | undefined {
  const lines = text.split('\n')
  const out: string[] = []
  let folded = false
  for (let i = 0; i < lines.length;) {
    let j = i + 1
    while (j < lines.length && lines[j] === lines[i]) j++
    const run = j - i
    const marker = `[a3s: previous line repeated ${run - 1} more times]`
    // Fold only where it saves bytes: a run of short lines can be smaller than its marker.
    if (run >= threshold && (run - 1) * (utf8Length(lines[i]!) + 1) > utf8Length(marker) + 1) {
      out.push(lines[i]!, marker)
      folded = true
    } else for (let k = i; k < j; k++) out.push(lines[k]!)
    i = j
  }
  return folded ? out.join('\n') : undefined
}

function cutMarker(omitted: number, total: number, uri: string | undefined): string {
  return uri === undefined
    ? `\n[a3s: ${omitted} of ${total} bytes omitted; full output at the evidence content_ref]\n`
    : `\n[a3s: ${omitted} of ${total} bytes omitted; full output at ${uri}]\n`
}

/**
 * Project `output` of `tool` under `policy`, deterministically: outputs within
 * `max_output_bytes` pass unchanged; larger ones are sampled (oversized top-level JSON array),
 * then folded (runs of identical lines), then cut UTF-8-safely to head (+ tail) with a marker
 * naming the artifact that holds the whole original. The same input and policy always give the
 * same bytes.
 */
export async function projectOutput(
  tool: string,
  output: string,
  policy: ToolResultTransformPolicyV1,
): Promise<Projection> {
  const original = utf8(output)
  const digest = await sha256Hex(original)
  const uri = artifactUri(tool, digest)
  const steps: string[] = []
  let text = output
  let bytes = original

  if (original.length > policy.max_output_bytes) {
    if (policy.structured_sample_items > 0) {
      const sampled = sampleJsonArray(text, policy.structured_sample_items)
      if (sampled !== undefined) {
        text = sampled
        steps.push(ALGORITHMS.sample)
      }
    }
    if (policy.fold_repeated_lines) {
      const folded = foldRepeatedLines(text, policy.repeated_line_threshold)
      if (folded !== undefined) {
        text = folded
        steps.push(ALGORITHMS.fold)
      }
    }
    bytes = steps.length > 0 ? utf8(text) : original
    if (bytes.length > policy.max_output_bytes) {
      const total = bytes.length
      // The marker names the artifact unless its URI (i.e. the tool name) is too long for the
      // marker reserve: then the marker points at content_ref instead, so the cap always holds.
      const named =
        utf8(cutMarker(total, total, uri)).length <= MARKER_RESERVE_BYTES ? uri : undefined
      if (policy.tail_bytes === 0) {
        const room = policy.max_output_bytes - utf8(cutMarker(total, total, named)).length
        const head = utf8SafeHeadLength(bytes, Math.max(0, Math.min(policy.head_bytes, room)))
        text = decoder.decode(bytes.subarray(0, head)) + cutMarker(total - head, total, named)
        steps.push(ALGORITHMS.head)
      } else {
        const head = utf8SafeHeadLength(bytes, policy.head_bytes)
        const tailStart = utf8SafeTailStart(bytes, total - policy.tail_bytes)
        text =
          decoder.decode(bytes.subarray(0, head)) +
          cutMarker(tailStart - head, total, named) +
          decoder.decode(bytes.subarray(tailStart))
        steps.push(ALGORITHMS.headTail)
      }
      bytes = utf8(text)
    }
  }

  const lossy = steps.length > 0
  const cut = steps.includes(ALGORITHMS.head) || steps.includes(ALGORITHMS.headTail)
  const transformed = steps.includes(ALGORITHMS.sample) || steps.includes(ALGORITHMS.fold)
  const lossMode: LossMode = !lossy
    ? 'none'
    : cut && transformed
      ? 'composite'
      : cut
        ? steps.includes(ALGORITHMS.head)
          ? 'bounded_preview'
          : 'head_tail'
        : 'deterministic_transform'
  const projectedDigest = lossy ? await sha256Hex(bytes) : digest
  const evidence: ToolResultEvidenceV1 = {
    schema: EVIDENCE_SCHEMA,
    original_bytes: original.length,
    projected_bytes: bytes.length,
    original_estimated_tokens: tokens(original.length),
    projected_estimated_tokens: tokens(bytes.length),
    token_estimator: TOKEN_ESTIMATOR,
    content_digest: `sha256:${digest}`,
    projected_digest: `sha256:${projectedDigest}`,
    byte_delta: bytes.length - original.length,
    estimated_token_delta: tokens(bytes.length) - tokens(original.length),
    repeat_key: `${tool}:sha256:${digest}`,
    content_ref: lossy ? uri : `inline:sha256:${digest}`,
    transform_algorithm: lossy ? steps.join('+') : 'identity',
    loss_mode: lossMode,
  }
  return lossy
    ? { output: text, evidence, artifact: { uri, bytes: original } }
    : { output: text, evidence }
}
