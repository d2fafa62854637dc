import { IsoagentError } from '../errors.ts'

/** Schema id of a transform policy. */
export const TRANSFORM_POLICY_SCHEMA = 'a3s.code.tool-result-transform-policy.v1'
/** Bytes every non-compatibility policy keeps free for transform markers. */
export const MARKER_RESERVE_BYTES = 512
/** Range of `max_output_bytes`. */
export const POLICY_OUTPUT_RANGE = { min: 1024, max: 102400 } as const

/**
 * `a3s.code.tool-result-transform-policy.v1`: how a session projects every tool result before a
 * model sees it. A plain JSON object; pinned per session and stored in its snapshot.
 */
export interface ToolResultTransformPolicyV1 {
  schema: typeof TRANSFORM_POLICY_SCHEMA
  /** Largest projected output, 1024..102400 bytes. */
  max_output_bytes: number
  /** Bytes kept from the start when cutting (UTF-8 safe). */
  head_bytes: number
  /** Bytes kept from the end when cutting (UTF-8 safe); 0 keeps only the head. */
  tail_bytes: number
  /** Fold runs of identical lines. */
  fold_repeated_lines: boolean
  /** Shortest run of identical lines that is folded (2..1000). */
  repeated_line_threshold: number
  /** Items kept when sampling an oversized top-level JSON array (0 turns sampling off). */
  structured_sample_items: number
}

const FIELDS = [
  'schema',
  'max_output_bytes',
  'head_bytes',
  'tail_bytes',
  'fold_repeated_lines',
  'repeated_line_threshold',
  'structured_sample_items',
] as const

/** The presets of {@link ToolResultTransformPolicyV1}. */
export const ToolResultTransformPolicy = {
  /** Default: the first 100 KiB, nothing folded or sampled. */
  conservative(): ToolResultTransformPolicyV1 {
    return {
      schema: TRANSFORM_POLICY_SCHEMA,
      max_output_bytes: 102400,
      head_bytes: 102400,
      tail_bytes: 0,
      fold_repeated_lines: false,
      repeated_line_threshold: 3,
      structured_sample_items: 0,
    }
  },
  /** 64 KiB head + 32 KiB tail, runs of ≥ 3 identical lines folded, ≤ 32 items of a JSON array. */
  contextEfficient(): ToolResultTransformPolicyV1 {
    return {
      schema: TRANSFORM_POLICY_SCHEMA,
      max_output_bytes: 102400,
      head_bytes: 65536,
      tail_bytes: 32768,
      fold_repeated_lines: true,
      repeated_line_threshold: 3,
      structured_sample_items: 32,
    }
  },
  /** Check every field; returns a normalised copy or throws `IsoagentError` `invalid_argument`. */
  validate: validatePolicy,
  /** True when two policies are the same. */
  equals(a: ToolResultTransformPolicyV1, b: ToolResultTransformPolicyV1): boolean {
    return FIELDS.every((f) => a[f] === b[f])
  },
} as const

/** A policy that only keeps a head (the compatibility form) needs no marker reserve. */
export function isCompatibilityPolicy(p: ToolResultTransformPolicyV1): boolean {
  return p.tail_bytes === 0 && !p.fold_repeated_lines && p.structured_sample_items === 0
}

function validatePolicy(input: unknown): ToolResultTransformPolicyV1 {
  const refuse = (why: string) =>
    new IsoagentError('invalid_argument', `invalid toolResultTransformPolicy: ${why}`, {
      data: { policy: input },
    })
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw refuse('not an object')
  const record = input as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!(FIELDS as readonly string[]).includes(key)) throw refuse(`unknown field "${key}"`)
  }
  if (record.schema !== TRANSFORM_POLICY_SCHEMA)
    throw refuse(`schema must be "${TRANSFORM_POLICY_SCHEMA}"`)
  const int = (key: string, min: number, max: number): number => {
    const value = record[key]
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw refuse(`${key} must be an integer in ${min}..${max}, got ${JSON.stringify(value)}`)
    }
    return value
  }
  const max = int('max_output_bytes', POLICY_OUTPUT_RANGE.min, POLICY_OUTPUT_RANGE.max)
  const policy: ToolResultTransformPolicyV1 = {
    schema: TRANSFORM_POLICY_SCHEMA,
    max_output_bytes: max,
    head_bytes: int('head_bytes', 0, max),
    tail_bytes: int('tail_bytes', 0, max),
    fold_repeated_lines: (() => {
      if (typeof record.fold_repeated_lines !== 'boolean')
        throw refuse('fold_repeated_lines must be a boolean')
      return record.fold_repeated_lines
    })(),
    repeated_line_threshold: int('repeated_line_threshold', 2, 1000),
    structured_sample_items: int('structured_sample_items', 0, 10000),
  }
  if (policy.head_bytes + policy.tail_bytes < 256)
    throw refuse('head_bytes + tail_bytes must be at least 256')
  if (isCompatibilityPolicy(policy)) {
    if (policy.head_bytes > max) throw refuse('head_bytes must not exceed max_output_bytes')
  } else if (policy.head_bytes + policy.tail_bytes + MARKER_RESERVE_BYTES > max) {
    throw refuse(
      `head_bytes + tail_bytes + ${MARKER_RESERVE_BYTES} (marker reserve) must not exceed max_output_bytes (${policy.head_bytes} + ${policy.tail_bytes} + ${MARKER_RESERVE_BYTES} > ${max})`,
    )
  }
  return policy
}
