// Result projection (`a3s.code.tool-result-transform-policy.v1`) and its evidence
// (`a3s.code.tool-result-evidence.v1`): presets, validation, the deterministic order
// sample → fold → UTF-8-safe head/tail, the byte cap, evidence fields, and artifacts.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  Agent,
  EVIDENCE_SCHEMA,
  IsoagentError,
  MARKER_RESERVE_BYTES,
  TOKEN_ESTIMATOR,
  TRANSFORM_POLICY_SCHEMA,
  ToolResultTransformPolicy,
  artifactUri,
  memoryArtifactStore,
  memoryWorkspace,
  projectOutput,
  toolFailure,
  type ArtifactStore,
  type CustomTool,
  type Projection,
  type ToolResult,
  type ToolResultEvidenceV1,
  type ToolResultTransformPolicyV1,
} from '../../adapters/index.ts'

const conservative = ToolResultTransformPolicy.conservative()
const efficient = ToolResultTransformPolicy.contextEfficient()
const PRESETS = [
  ['conservative', conservative],
  ['contextEfficient', efficient],
] as const

const ALG = {
  sample: 'a3s.json-array-sample/v1',
  fold: 'a3s.fold-repeated-lines/v1',
  headTail: 'a3s.utf8-head-tail/v1',
  head: 'a3s.utf8-head/v1',
} as const

const EVIDENCE_KEYS = [
  'schema',
  'original_bytes',
  'projected_bytes',
  'original_estimated_tokens',
  'projected_estimated_tokens',
  'token_estimator',
  'content_digest',
  'projected_digest',
  'byte_delta',
  'estimated_token_delta',
  'repeat_key',
  'content_ref',
  'transform_algorithm',
  'loss_mode',
].sort()

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const bytesOf = (s: string) => Buffer.from(s, 'utf8')
const byteLength = (s: string) => Buffer.byteLength(s, 'utf8')
const sha = (data: string | Uint8Array) =>
  createHash('sha256')
    .update(typeof data === 'string' ? bytesOf(data) : data)
    .digest('hex')
const tokens = (bytes: number) => Math.ceil(bytes / 4)
const policy = (over: Partial<Record<keyof ToolResultTransformPolicyV1, unknown>>) =>
  ({ ...efficient, ...over }) as ToolResultTransformPolicyV1

/** Every evidence field, recomputed independently (node:crypto, Buffer). */
function expectEvidence(tool: string, input: string, p: Projection): ToolResultEvidenceV1 {
  const e = p.evidence
  const original = bytesOf(input)
  const projected = bytesOf(p.output)
  const digest = sha(original)
  expect(Object.keys(e).sort()).toEqual(EVIDENCE_KEYS)
  expect(e.schema).toBe(EVIDENCE_SCHEMA)
  expect(e.schema).toBe('a3s.code.tool-result-evidence.v1')
  expect(e.token_estimator).toBe(TOKEN_ESTIMATOR)
  expect(e.token_estimator).toBe('utf8-bytes-ceil-div-4/v1')
  expect(e.original_bytes).toBe(original.length)
  expect(e.projected_bytes).toBe(projected.length)
  expect(e.original_estimated_tokens).toBe(tokens(original.length))
  expect(e.projected_estimated_tokens).toBe(tokens(projected.length))
  expect(e.content_digest).toBe(`sha256:${digest}`)
  expect(e.projected_digest).toBe(`sha256:${sha(projected)}`)
  expect(e.byte_delta).toBe(projected.length - original.length)
  expect(e.estimated_token_delta).toBe(tokens(projected.length) - tokens(original.length))
  expect(e.byte_delta).toBeLessThanOrEqual(0)
  expect(e.estimated_token_delta).toBeLessThanOrEqual(0)
  expect(e.repeat_key).toContain(digest)
  if (e.loss_mode === 'none') {
    expect(p.output).toBe(input)
    expect(e.transform_algorithm).toBe('identity')
    expect(e.content_ref).toBe(`inline:sha256:${digest}`)
    expect(e.projected_digest).toBe(e.content_digest)
    expect(p.artifact).toBeUndefined()
  } else {
    expect(e.transform_algorithm).not.toBe('identity')
    expect(e.content_ref).toBe(`a3s://tool-output/${encodeURIComponent(tool)}/${digest}`)
    expect(e.content_ref).toBe(artifactUri(tool, digest))
    expect(p.artifact?.uri).toBe(e.content_ref)
    expect(Buffer.from(p.artifact!.bytes).equals(original)).toBe(true)
  }
  return e
}

/** Project and check the evidence, the cap and strict UTF-8 of the output. */
async function project(
  tool: string,
  input: string,
  pol: ToolResultTransformPolicyV1,
): Promise<Projection> {
  const p = await projectOutput(tool, input, pol)
  expectEvidence(tool, input, p)
  const out = bytesOf(p.output)
  expect(out.length).toBeLessThanOrEqual(pol.max_output_bytes)
  expect(strict.decode(out)).toBe(p.output)
  // A cut never introduces U+FFFD (lone surrogates in the input are the only source of one).
  const count = (s: string) => s.split('\uFFFD').length - 1
  const loneSurrogates = (input.match(/[\uD800-\uDFFF]/gu) ?? []).length
  expect(count(p.output)).toBeLessThanOrEqual(count(input) + loneSurrogates)
  return p
}

const CUT = /\n\[a3s: (\d+) of (\d+) bytes omitted; full output at ([^\]\s]+)\]\n/

/** Split a cut output into head, marker numbers and tail. */
function splitCut(output: string) {
  const m = CUT.exec(output)
  if (m === null) throw new Error('no cut marker')
  return {
    head: output.slice(0, m.index),
    tail: output.slice(m.index + m[0].length),
    omitted: Number(m[1]),
    total: Number(m[2]),
    ref: m[3]!,
    marker: m[0],
  }
}

const uniqueLines = (bytes: number) => {
  let s = ''
  for (let i = 0; s.length < bytes; i++) s += `line ${i} ${'x'.repeat(i % 50)}\n`
  return s.slice(0, bytes)
}

function expectInvalid(fn: () => unknown, field: RegExp | string) {
  let caught: unknown
  try {
    fn()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(IsoagentError)
  const error = caught as IsoagentError
  expect(error.code).toBe('invalid_argument')
  expect(error.message).toMatch(field)
}

describe('presets', () => {
  it('conservative keeps the first 100 KiB, nothing folded or sampled', () => {
    expect(ToolResultTransformPolicy.conservative()).toEqual({
      schema: 'a3s.code.tool-result-transform-policy.v1',
      max_output_bytes: 102400,
      head_bytes: 102400,
      tail_bytes: 0,
      fold_repeated_lines: false,
      repeated_line_threshold: 3,
      structured_sample_items: 0,
    })
    expect(TRANSFORM_POLICY_SCHEMA).toBe('a3s.code.tool-result-transform-policy.v1')
  })

  it('contextEfficient is 64 KiB head + 32 KiB tail, fold ≥ 3, sample 32', () => {
    expect(ToolResultTransformPolicy.contextEfficient()).toEqual({
      schema: 'a3s.code.tool-result-transform-policy.v1',
      max_output_bytes: 102400,
      head_bytes: 65536,
      tail_bytes: 32768,
      fold_repeated_lines: true,
      repeated_line_threshold: 3,
      structured_sample_items: 32,
    })
    expect(MARKER_RESERVE_BYTES).toBe(512)
  })

  it('both pass validate, which returns an equal copy', () => {
    for (const [, preset] of PRESETS) {
      const checked = ToolResultTransformPolicy.validate(preset)
      expect(checked).toEqual(preset)
      expect(checked).not.toBe(preset)
      expect(ToolResultTransformPolicy.equals(checked, preset)).toBe(true)
      // Plain JSON: survives a JSON round trip unchanged.
      expect(ToolResultTransformPolicy.validate(JSON.parse(JSON.stringify(preset)))).toEqual(preset)
    }
    expect(ToolResultTransformPolicy.equals(conservative, efficient)).toBe(false)
  })

  it('every call is a fresh object', () => {
    const a = ToolResultTransformPolicy.conservative()
    a.max_output_bytes = 2048
    expect(ToolResultTransformPolicy.conservative().max_output_bytes).toBe(102400)
  })
})

describe('policy validation', () => {
  it('refuses non-objects', () => {
    for (const bad of [null, undefined, [], 'x', 5, true])
      expectInvalid(() => ToolResultTransformPolicy.validate(bad), /not an object/)
  })

  it('refuses unknown fields', () => {
    expectInvalid(
      () => ToolResultTransformPolicy.validate({ ...conservative, extra: 1 }),
      /unknown field "extra"/,
    )
    expectInvalid(
      () => ToolResultTransformPolicy.validate({ ...efficient, maxOutputBytes: 2048 }),
      /unknown field "maxOutputBytes"/,
    )
  })

  it('refuses a wrong or missing schema id', () => {
    for (const schema of [
      undefined,
      'a3s.code.tool-result-transform-policy.v2',
      'a3s.code.tool-result-evidence.v1',
      '',
      1,
    ]) {
      expectInvalid(() => ToolResultTransformPolicy.validate({ ...conservative, schema }), /schema/)
    }
    const { schema: _s, ...noSchema } = conservative
    expectInvalid(() => ToolResultTransformPolicy.validate(noSchema), /schema/)
  })

  it('refuses max_output_bytes outside 1024..102400 or not an integer', () => {
    for (const v of [1023, 102401, 0, -1, 1024.5, 2048.000001, NaN, Infinity, '2048', null]) {
      expectInvalid(
        () =>
          ToolResultTransformPolicy.validate({
            ...conservative,
            max_output_bytes: v,
            head_bytes: 1024,
          }),
        /max_output_bytes/,
      )
    }
    const { max_output_bytes: _m, ...missing } = conservative
    expectInvalid(() => ToolResultTransformPolicy.validate(missing), /max_output_bytes/)
    // The bounds themselves are accepted.
    for (const max of [1024, 102400]) {
      expect(
        ToolResultTransformPolicy.validate({
          ...conservative,
          max_output_bytes: max,
          head_bytes: max,
        }),
      ).toMatchObject({ max_output_bytes: max })
    }
  })

  it('refuses head_bytes / tail_bytes that are out of range or not integers', () => {
    for (const v of [-1, 1.5, 102401, '100', null, NaN]) {
      expectInvalid(
        () => ToolResultTransformPolicy.validate({ ...conservative, head_bytes: v }),
        /head_bytes/,
      )
      expectInvalid(
        () => ToolResultTransformPolicy.validate({ ...efficient, tail_bytes: v }),
        /tail_bytes/,
      )
    }
    // head_bytes beyond max_output_bytes.
    expectInvalid(
      () =>
        ToolResultTransformPolicy.validate({
          ...conservative,
          max_output_bytes: 2048,
          head_bytes: 2049,
        }),
      /head_bytes/,
    )
    expectInvalid(
      () =>
        ToolResultTransformPolicy.validate({
          ...conservative,
          max_output_bytes: 2048,
          head_bytes: 1024,
          tail_bytes: 2049,
        }),
      /tail_bytes/,
    )
    // Too little kept at all.
    expectInvalid(
      () =>
        ToolResultTransformPolicy.validate({ ...conservative, head_bytes: 100, tail_bytes: 100 }),
      /head_bytes \+ tail_bytes must be at least 256/,
    )
  })

  it('refuses head + tail + 512 > max for non-compatibility policies, at the exact boundary', () => {
    const ok = { ...efficient, head_bytes: 65536, tail_bytes: 102400 - 65536 - 512 }
    expect(ToolResultTransformPolicy.validate(ok)).toEqual(ok)
    expectInvalid(
      () => ToolResultTransformPolicy.validate({ ...ok, tail_bytes: ok.tail_bytes + 1 }),
      /head_bytes \+ tail_bytes \+ 512 .*max_output_bytes/,
    )
    // Non-compatibility because of a tail, folding or sampling: the reserve applies.
    for (const over of [
      { tail_bytes: 1 },
      { fold_repeated_lines: true },
      { structured_sample_items: 1 },
    ]) {
      expectInvalid(
        () => ToolResultTransformPolicy.validate({ ...conservative, ...over }),
        /head_bytes \+ tail_bytes \+ 512/,
      )
      expect(
        ToolResultTransformPolicy.validate({ ...conservative, ...over, head_bytes: 102400 - 513 }),
      ).toMatchObject({ head_bytes: 102400 - 513 })
    }
    // The compatibility form (head only) needs no reserve: head may equal max.
    expect(
      ToolResultTransformPolicy.validate({
        ...conservative,
        max_output_bytes: 1024,
        head_bytes: 1024,
      }),
    ).toMatchObject({ head_bytes: 1024 })
  })

  it('refuses a non-boolean fold_repeated_lines', () => {
    for (const v of ['true', 1, 0, null, undefined]) {
      expectInvalid(
        () => ToolResultTransformPolicy.validate({ ...efficient, fold_repeated_lines: v }),
        /fold_repeated_lines/,
      )
    }
  })

  it('refuses repeated_line_threshold < 2 (or > 1000, or not an integer)', () => {
    for (const v of [1, 0, -3, 1001, 2.5, '3', null]) {
      expectInvalid(
        () => ToolResultTransformPolicy.validate({ ...efficient, repeated_line_threshold: v }),
        /repeated_line_threshold/,
      )
    }
    for (const v of [2, 1000])
      expect(
        ToolResultTransformPolicy.validate({ ...efficient, repeated_line_threshold: v }),
      ).toMatchObject({ repeated_line_threshold: v })
  })

  it('refuses structured_sample_items < 0 (or > 10000, or not an integer)', () => {
    for (const v of [-1, 10001, 1.5, '32', null]) {
      expectInvalid(
        () => ToolResultTransformPolicy.validate({ ...efficient, structured_sample_items: v }),
        /structured_sample_items/,
      )
    }
    for (const v of [0, 1, 10000])
      expect(
        ToolResultTransformPolicy.validate({ ...efficient, structured_sample_items: v }),
      ).toMatchObject({ structured_sample_items: v })
  })

  it('refuses a bad policy at session creation and on resume with another policy', async () => {
    const agent = Agent.create()
    const bads: unknown[] = [
      { ...conservative, max_output_bytes: 1023, head_bytes: 1000 },
      { ...efficient, tail_bytes: 40000 },
      { ...efficient, repeated_line_threshold: 1 },
      { ...efficient, structured_sample_items: -1 },
      { ...conservative, schema: 'nope' },
      { ...conservative, bogus: true },
    ]
    for (const bad of bads) {
      const error = await agent
        .session(memoryWorkspace(), {
          toolResultTransformPolicy: bad as ToolResultTransformPolicyV1,
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        )
      expect(error).toBeInstanceOf(IsoagentError)
      expect((error as IsoagentError).code).toBe('invalid_argument')
      expect((error as IsoagentError).message).toMatch(/toolResultTransformPolicy/)
    }
    const session = await agent.session(memoryWorkspace(), { toolResultTransformPolicy: efficient })
    expect(session.toolResultTransformPolicy).toEqual(efficient)
    expect(session.snapshot().tool_result_transform_policy).toEqual(efficient)
    expect((await agent.session(memoryWorkspace())).toolResultTransformPolicy).toEqual(conservative)
    await expect(
      agent.resumeSession(session.snapshot(), {
        workspace: memoryWorkspace(),
        toolResultTransformPolicy: conservative,
      }),
    ).rejects.toMatchObject({ code: 'invalid_argument' })
  })
})

describe('pass-through within the cap', () => {
  it('leaves outputs of at most max_output_bytes unchanged, loss_mode none', async () => {
    for (const [, pol] of PRESETS) {
      for (const input of [
        '',
        'x',
        'hello\n',
        'a'.repeat(102400),
        'é'.repeat(51200),
        '😀'.repeat(25600),
        '\uFEFFbom kept',
        'same\n'.repeat(20000), // would fold, but it fits
        JSON.stringify(Array.from({ length: 10000 }, (_, i) => i)), // would sample, but it fits
      ]) {
        expect(byteLength(input)).toBeLessThanOrEqual(102400)
        const p = await project('t', input, pol)
        expect(p.output).toBe(input)
        expect(p.evidence.loss_mode).toBe('none')
        expect(p.evidence.transform_algorithm).toBe('identity')
        expect(p.evidence.content_ref).toBe(`inline:sha256:${sha(input)}`)
        expect(p.evidence.byte_delta).toBe(0)
        expect(p.artifact).toBeUndefined()
      }
    }
  })

  it('starts projecting at max_output_bytes + 1', async () => {
    for (const [, pol] of PRESETS) {
      const p = await project('t', uniqueLines(102401), pol)
      expect(p.evidence.loss_mode).not.toBe('none')
      expect(p.artifact).toBeDefined()
    }
    const small = policy({ max_output_bytes: 1024, head_bytes: 256, tail_bytes: 256 })
    expect((await project('t', 'a'.repeat(1024), small)).evidence.loss_mode).toBe('none')
    expect((await project('t', 'a'.repeat(1025), small)).evidence.loss_mode).toBe('head_tail')
  })
})

describe('the deterministic order: sample → fold → head/tail', () => {
  it('cuts to exactly head + marker + tail (contextEfficient)', async () => {
    const input = uniqueLines(300_000)
    const p = await project('t', input, efficient)
    const uri = `a3s://tool-output/t/${sha(input)}`
    const total = 300_000
    const omitted = total - 65536 - 32768
    expect(p.output).toBe(
      input.slice(0, 65536) +
        `\n[a3s: ${omitted} of ${total} bytes omitted; full output at ${uri}]\n` +
        input.slice(total - 32768),
    )
    expect(p.evidence.transform_algorithm).toBe(ALG.headTail)
    expect(p.evidence.loss_mode).toBe('head_tail')
  })

  it('keeps the longest head that fits with the marker (conservative)', async () => {
    const input = uniqueLines(300_000)
    const p = await project('read', input, conservative)
    const uri = `a3s://tool-output/read/${sha(input)}`
    const marker = (omitted: number) =>
      `\n[a3s: ${omitted} of 300000 bytes omitted; full output at ${uri}]\n`
    const head = 102400 - byteLength(marker(300000))
    expect(p.output).toBe(input.slice(0, head) + marker(300000 - head))
    expect(p.evidence.transform_algorithm).toBe(ALG.head)
    expect(p.evidence.loss_mode).toBe('bounded_preview')
  })

  it('samples, then folds the sample (pretty JSON of identical items)', async () => {
    const input = JSON.stringify(
      Array.from({ length: 100_000 }, () => 'same'),
      null,
      2,
    )
    const p = await project('t', input, efficient)
    const expected =
      '[\n  "same",\n[a3s: previous line repeated 30 more times]\n  "same"\n]' +
      '\n[a3s: sampled 32 of 100000 items of a top-level JSON array, evenly spaced]'
    expect(p.output).toBe(expected)
    expect(p.evidence.transform_algorithm).toBe(`${ALG.sample}+${ALG.fold}`)
    expect(p.evidence.loss_mode).toBe('deterministic_transform')
  })

  it('folds before cutting: the head already shows the folded text', async () => {
    // 4000 blocks of a unique line + 5 identical lines: folding shrinks it but not under the cap.
    const dup = `dup ${'d'.repeat(60)}`
    let input = ''
    for (let i = 0; i < 4000; i++) input += `unique ${i} ${'u'.repeat(40)}\n` + `${dup}\n`.repeat(5)
    const p = await project('t', input, efficient)
    expect(p.evidence.transform_algorithm).toBe(`${ALG.fold}+${ALG.headTail}`)
    expect(p.evidence.loss_mode).toBe('composite')
    const { head, tail, total, omitted } = splitCut(p.output)
    expect(head.startsWith('unique 0 ')).toBe(true)
    expect(head).toContain(`${dup}\n[a3s: previous line repeated 4 more times]\nunique 1 `)
    expect(tail).toContain('[a3s: previous line repeated 4 more times]')
    // The cut's numbers refer to the folded text, not to the original.
    expect(total).toBeLessThan(byteLength(input))
    expect(byteLength(head) + omitted + byteLength(tail)).toBe(total)
  })

  it('samples before cutting when the sample is still too large', async () => {
    const item = 'i'.repeat(10_000)
    const input = JSON.stringify(Array.from({ length: 100 }, (_, i) => `${i}:${item}`))
    const p = await project('t', input, efficient)
    expect(p.evidence.transform_algorithm).toBe(`${ALG.sample}+${ALG.headTail}`)
    expect(p.evidence.loss_mode).toBe('composite')
    const { head, tail } = splitCut(p.output)
    expect(head.startsWith('["0:iii')).toBe(true)
    expect(
      tail.endsWith(
        '"99:' +
          item +
          '"]\n[a3s: sampled 32 of 100 items of a top-level JSON array, evenly spaced]',
      ),
    ).toBe(true)
  })

  it('does not fold runs shorter than the threshold', async () => {
    const line = (i: number) => `line ${i} ${'p'.repeat(100)}`
    let input = ''
    for (let i = 0; i < 1500; i++) input += `${line(i)}\n${line(i)}\n`
    expect(byteLength(input)).toBeGreaterThan(102400)
    const p = await project('t', input, efficient)
    expect(p.evidence.transform_algorithm).toBe(ALG.headTail)
    const two = await project('t', input, policy({ repeated_line_threshold: 2 }))
    expect(two.evidence.transform_algorithm).toBe(`${ALG.fold}+${ALG.headTail}`)
    expect(
      two.output.startsWith(
        `${line(0)}\n[a3s: previous line repeated 1 more times]\n${line(1)}\n[a3s: previous`,
      ),
    ).toBe(true)
  })

  it('does not fold runs whose marker would be longer than the run', async () => {
    // A run of 3 two-byte lines is smaller than the ~45-byte marker that would replace it.
    let input = ''
    for (let i = 0; i < 20_000; i++) input += `${i % 10}\n`.repeat(3)
    const p = await project('t', input, efficient)
    expect(p.evidence.transform_algorithm).toBe(ALG.headTail)
    expect(splitCut(p.output).total).toBe(byteLength(input))
    expect(p.evidence.projected_bytes).toBeLessThanOrEqual(102400)
  })

  it('only samples a top-level JSON array that parses', async () => {
    const big = 'z'.repeat(200)
    const items = Array.from({ length: 1000 }, (_, i) => `${i}${big}`)
    const cases = [
      JSON.stringify({ items }), // an object
      JSON.stringify(items).slice(0, -1) + ',]', // not JSON
      '[' + items.join(',') + ']', // not JSON either
      'prefix ' + JSON.stringify(items), // not only an array
    ]
    for (const input of cases) {
      const p = await project('t', input, efficient)
      expect(p.evidence.transform_algorithm).toBe(ALG.headTail)
    }
    // Surrounding whitespace is fine.
    const padded = await project('t', `\n  ${JSON.stringify(items)}  \n`, efficient)
    expect(padded.evidence.transform_algorithm).toBe(ALG.sample)
  })
})

describe('evidence', () => {
  it('has every field for lossless and lossy results', async () => {
    const inputs = [
      'small',
      uniqueLines(150_000),
      'x\n'.repeat(100_000),
      JSON.stringify(Array.from({ length: 50_000 }, (_, i) => ({ i }))),
    ]
    const modes = new Set<string>()
    for (const [, pol] of PRESETS)
      for (const input of inputs)
        modes.add((await project('tool_x', input, pol)).evidence.loss_mode)
    expect([...modes].sort()).toEqual([
      'bounded_preview',
      'deterministic_transform',
      'head_tail',
      'none',
    ])
  })

  it('estimates tokens as ceil(bytes / 4)', async () => {
    for (const n of [0, 1, 2, 3, 4, 5, 7, 8, 9])
      expect((await project('t', 'a'.repeat(n), conservative)).evidence).toMatchObject({
        original_estimated_tokens: Math.ceil(n / 4),
        projected_estimated_tokens: Math.ceil(n / 4),
        estimated_token_delta: 0,
      })
    const e = (await project('t', 'é'.repeat(60_001), efficient)).evidence
    expect(e.original_bytes).toBe(120_002)
    expect(e.original_estimated_tokens).toBe(30_001)
  })

  it('repeat_key: same tool and content give the same key; anything else a different one', async () => {
    const big = uniqueLines(200_000)
    const key = async (tool: string, input: string, pol = conservative) =>
      (await project(tool, input, pol)).evidence.repeat_key
    expect(await key('read', big)).toBe(await key('read', big))
    expect(await key('read', big)).toBe(await key('read', big, efficient))
    expect(await key('read', 'a')).toBe(await key('read', 'a'))
    expect(await key('read', big)).not.toBe(await key('grep', big))
    expect(await key('read', big)).not.toBe(await key('read', big + ' '))
    expect(await key('read', 'a')).not.toBe(await key('read', 'b'))
    expect(await key('read', 'a')).not.toBe(await key('reaD', 'a'))
  })

  it('encodes the tool name in the artifact URI', async () => {
    const input = uniqueLines(200_000)
    const p = await project('my tool/é', input, conservative)
    expect(p.evidence.content_ref).toBe(`a3s://tool-output/my%20tool%2F%C3%A9/${sha(input)}`)
    expect(artifactUri('a/b', 'ff')).toBe('a3s://tool-output/a%2Fb/ff')
  })
})

describe('byte-exact determinism', () => {
  it('gives identical bytes and evidence for the same input and policy, every time', async () => {
    const inputs = [
      uniqueLines(250_000),
      'é€😀a'.repeat(30_000),
      'same\n'.repeat(100_000),
      JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ id: i, v: 'x'.repeat(i % 7) }))),
      JSON.stringify(
        Array.from({ length: 5000 }, (_, i) => ({ id: i })),
        null,
        2,
      ),
    ]
    for (const [, pol] of PRESETS) {
      for (const input of inputs) {
        const runs = await Promise.all(
          [0, 1, 2].map(() => projectOutput('t', input, ToolResultTransformPolicy.validate(pol))),
        )
        const again = await projectOutput('t', input, pol)
        runs.push(again)
        const first = runs[0]!
        for (const run of runs) {
          expect(bytesOf(run.output).equals(bytesOf(first.output))).toBe(true)
          expect(run.evidence).toEqual(first.evidence)
          expect(JSON.stringify(run.evidence)).toBe(JSON.stringify(first.evidence))
          expect(run.artifact?.uri).toBe(first.artifact?.uri)
        }
      }
    }
  })
})

describe('the cap and UTF-8 safety', () => {
  const CHARS = [
    ['2-byte', 'é'],
    ['3-byte', '€'],
    ['3-byte CJK', '漢'],
    ['4-byte', '𝄞'],
    ['emoji', '😀'],
  ] as const

  it('never exceeds max_output_bytes and never splits a character, at every cut offset', async () => {
    for (const [, ch] of CHARS) {
      const w = byteLength(ch)
      for (const [, pol] of PRESETS) {
        for (const pad of [0, 1, 2, 3]) {
          for (const suffix of [0, 1, 2, 3]) {
            const input = 'a'.repeat(pad) + ch.repeat(Math.ceil(150_000 / w)) + 'b'.repeat(suffix)
            const p = await project('t', input, pol)
            const { head, tail, omitted, total } = splitCut(p.output)
            expect(input.startsWith(head)).toBe(true)
            expect(input.endsWith(tail)).toBe(true)
            expect(byteLength(head) + omitted + byteLength(tail)).toBe(total)
            if (pol === efficient) {
              // The longest whole-character head ≤ 64 KiB and tail ≤ 32 KiB.
              expect(byteLength(head)).toBeLessThanOrEqual(65536)
              expect(byteLength(head)).toBeGreaterThan(65536 - w)
              expect(byteLength(tail)).toBeLessThanOrEqual(32768)
              expect(byteLength(tail)).toBeGreaterThan(32768 - w)
            } else {
              expect(tail).toBe('')
              // The longest whole-character head that fits beside the widest marker.
              const widest = `\n[a3s: ${total} of ${total} bytes omitted; full output at ${p.evidence.content_ref}]\n`
              expect(byteLength(head)).toBeGreaterThan(102400 - byteLength(widest) - w)
            }
          }
        }
      }
    }
  })

  it('holds for many sizes of mixed-width text, around and far beyond the cap', async () => {
    const unit = [...'aé€😀漢𝄞\n'] // 1 + 2 + 3 + 4 + 3 + 4 + 1 = 18 bytes
    /** Code points of `unit`, starting at `shift`, up to at most `size` bytes. */
    const mixedText = (size: number, shift: number) => {
      const rotated = [...unit.slice(shift % unit.length), ...unit.slice(0, shift % unit.length)]
      let text = rotated.join('').repeat(Math.floor(size / 18))
      let bytes = byteLength(text)
      for (const ch of rotated) {
        if (bytes + byteLength(ch) > size) break
        text += ch
        bytes += byteLength(ch)
      }
      return text
    }
    const small = policy({ max_output_bytes: 1024, head_bytes: 300, tail_bytes: 200 })
    const compatSmall = { ...conservative, max_output_bytes: 1024, head_bytes: 1024 }
    const sizes = [1020, 1023, 1024, 1025, 1030, 5000, 102395, 102399, 102400, 102401, 102407]
    for (let s = 102400; s < 1_100_000; s = Math.floor(s * 1.37) + 7) sizes.push(s)
    for (const pol of [conservative, efficient, small, compatSmall]) {
      for (const size of sizes) {
        for (const shift of [0, 1, 3]) {
          const input = mixedText(size, shift)
          expect(byteLength(input)).toBeGreaterThan(size - 4)
          const p = await project('t', input, pol)
          expect(byteLength(p.output)).toBeLessThanOrEqual(pol.max_output_bytes)
          if (byteLength(input) <= pol.max_output_bytes) expect(p.output).toBe(input)
        }
      }
    }
  })

  it('keeps lone surrogates (encoded as U+FFFD) whole at the cut points', async () => {
    // The cut points of contextEfficient at 65536 and total - 32768 land inside the 3-byte
    // EF BF BD of a lone surrogate for some of these shifts.
    for (const [, pol] of PRESETS) {
      for (const shift of [0, 1, 2]) {
        const lone = '\uD800'
        const input =
          'a'.repeat(65535 - shift) +
          lone +
          'b'.repeat(40_000) +
          lone +
          'c'.repeat(32766 + shift) +
          '\uDFFF'
        const p = await project('t', input, pol)
        expect(byteLength(p.output)).toBeLessThanOrEqual(pol.max_output_bytes)
        expect(p.evidence.original_bytes).toBe(bytesOf(input).length)
      }
    }
  })

  it('keeps a huge tool name from pushing the marker over the cap', async () => {
    // Regression: the marker holds the artifact URI, i.e. the tool name. A tool name longer than
    // the marker reserve made the head room negative and kept almost the whole output.
    for (const [, pol] of PRESETS) {
      for (const tool of ['n'.repeat(200_000), 'é'.repeat(300), 'x'.repeat(1024)]) {
        const input = uniqueLines(300_000)
        const p = await project(tool, input, pol)
        expect(byteLength(p.output)).toBeLessThanOrEqual(pol.max_output_bytes)
        expect(p.output).toContain('bytes omitted; full output at the evidence content_ref]')
        expect(p.evidence.content_ref).toBe(artifactUri(tool, sha(input)))
      }
    }
    const compatSmall = { ...conservative, max_output_bytes: 1024, head_bytes: 1024 }
    const p = await project('y'.repeat(2000), uniqueLines(5000), compatSmall)
    expect(byteLength(p.output)).toBeLessThanOrEqual(1024)
    expect(p.output.startsWith('line 0 ')).toBe(true)
    // Through a session: an unknown tool's failure quotes its (huge) name.
    for (const [, pol] of PRESETS) {
      const session = await Agent.create().session(memoryWorkspace(), {
        toolResultTransformPolicy: pol,
      })
      const r = await session.tool('q'.repeat(200_000), {})
      expect(r.exitCode).toBe(1)
      expect(byteLength(r.output)).toBeLessThanOrEqual(102400)
      expect((r.metadata?.a3s_tool_result_evidence as ToolResultEvidenceV1).loss_mode).not.toBe(
        'none',
      )
    }
  })
})

describe('loss modes', () => {
  it('compatibility head-only cut → bounded_preview', async () => {
    const p = await project('t', uniqueLines(200_000), conservative)
    expect(p.evidence).toMatchObject({
      loss_mode: 'bounded_preview',
      transform_algorithm: ALG.head,
    })
    // Folding and sampling are off in the compatibility form, even when they would apply.
    const q = await project('t', 'same\n'.repeat(100_000), conservative)
    expect(q.evidence).toMatchObject({
      loss_mode: 'bounded_preview',
      transform_algorithm: ALG.head,
    })
  })

  it('head + tail cut → head_tail', async () => {
    const p = await project('t', uniqueLines(200_000), efficient)
    expect(p.evidence).toMatchObject({ loss_mode: 'head_tail', transform_algorithm: ALG.headTail })
  })

  it('fold or sample bringing it under the cap → deterministic_transform', async () => {
    const fold = await project('t', 'header\n' + 'same\n'.repeat(100_000) + 'footer', efficient)
    expect(fold.output).toBe('header\nsame\n[a3s: previous line repeated 99999 more times]\nfooter')
    expect(fold.evidence).toMatchObject({
      loss_mode: 'deterministic_transform',
      transform_algorithm: ALG.fold,
    })
    const sample = await project(
      't',
      JSON.stringify(Array.from({ length: 100_000 }, (_, i) => i)),
      efficient,
    )
    expect(sample.evidence).toMatchObject({
      loss_mode: 'deterministic_transform',
      transform_algorithm: ALG.sample,
    })
  })

  it('fold + cut → composite', async () => {
    let input = ''
    for (let i = 0; i < 20_000; i++) input += `row ${i}\n` + 'same line, repeated\n'.repeat(5)
    const p = await project('t', input, efficient)
    expect(p.evidence).toMatchObject({
      loss_mode: 'composite',
      transform_algorithm: `${ALG.fold}+${ALG.headTail}`,
    })
    const { total } = splitCut(p.output)
    expect(total).toBeGreaterThan(102400)
    expect(total).toBeLessThan(byteLength(input))
  })
})

describe('large inputs', () => {
  const TEN_MB = 10 * 1024 * 1024

  it('projects a 10 MB output under both presets', async () => {
    const input = uniqueLines(TEN_MB)
    expect(byteLength(input)).toBe(TEN_MB)
    const c = await project('t', input, conservative)
    expect(c.evidence).toMatchObject({ loss_mode: 'bounded_preview', original_bytes: TEN_MB })
    expect(input.startsWith(splitCut(c.output).head)).toBe(true)
    const e = await project('t', input, efficient)
    expect(e.evidence).toMatchObject({ loss_mode: 'head_tail', original_bytes: TEN_MB })
    expect(splitCut(e.output)).toMatchObject({ omitted: TEN_MB - 65536 - 32768, total: TEN_MB })
    // A 10 MB run of one line folds to almost nothing.
    const rep = await project('t', 'spam\n'.repeat(TEN_MB / 5), efficient)
    expect(rep.output).toBe(`spam\n[a3s: previous line repeated ${TEN_MB / 5 - 1} more times]\n`)
  })

  it('does not sample a 1-item array (nor one with ≤ 32 items)', async () => {
    const one = JSON.stringify(['x'.repeat(200_000)])
    const p = await project('t', one, efficient)
    expect(p.evidence.transform_algorithm).toBe(ALG.headTail)
    const thirtyTwo = JSON.stringify(Array.from({ length: 32 }, () => 'y'.repeat(5000)))
    expect((await project('t', thirtyTwo, efficient)).evidence.transform_algorithm).toBe(
      ALG.headTail,
    )
    const thirtyThree = JSON.stringify(
      Array.from({ length: 33 }, (_, i) => `${i}:${'y'.repeat(3140)}`),
    )
    expect(byteLength(thirtyThree)).toBeGreaterThan(102400)
    expect((await project('t', thirtyThree, efficient)).evidence.transform_algorithm).toBe(
      ALG.sample,
    )
  })

  it('samples 32 evenly spaced items of a 1,000,000-item array, first and last included', async () => {
    const n = 1_000_000
    const input = JSON.stringify(Array.from({ length: n }, (_, i) => i))
    const p = await project('t', input, efficient)
    expect(p.evidence.transform_algorithm).toBe(ALG.sample)
    expect(p.evidence.loss_mode).toBe('deterministic_transform')
    const [body, note, ...rest] = p.output.split('\n')
    expect(rest).toEqual([])
    expect(note).toBe(`[a3s: sampled 32 of ${n} items of a top-level JSON array, evenly spaced]`)
    const picked = JSON.parse(body!) as number[]
    expect(picked).toHaveLength(32)
    expect(picked[0]).toBe(0)
    expect(picked[31]).toBe(n - 1)
    expect(picked).toEqual(Array.from({ length: 32 }, (_, i) => Math.floor((i * (n - 1)) / 31)))
    // Evenly spaced: every gap is ⌊(n-1)/31⌋ or one more.
    for (let i = 1; i < 32; i++) {
      const gap = picked[i]! - picked[i - 1]!
      expect(gap === Math.floor((n - 1) / 31) || gap === Math.floor((n - 1) / 31) + 1).toBe(true)
    }
    // The conservative preset does not sample: a head preview of the raw array.
    const c = await project('t', input, conservative)
    expect(c.evidence.transform_algorithm).toBe(ALG.head)
  })

  it('keeps a pretty-printed array pretty when sampling it', async () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item-${i}` }))
    const p = await project('t', JSON.stringify(items, null, 2), efficient)
    const picked = Array.from({ length: 32 }, (_, i) => items[Math.floor((i * 19_999) / 31)])
    expect(p.output).toBe(
      JSON.stringify(picked, null, 2) +
        '\n[a3s: sampled 32 of 20000 items of a top-level JSON array, evenly spaced]',
    )
  })

  it('cuts a huge array of small items that still exceeds the cap after sampling', async () => {
    const n = 300_000
    const item = (i: number) => `item-${i}-xxxxxxxxxx`
    const input = JSON.stringify(Array.from({ length: n }, (_, i) => item(i)))
    const pol = policy({ structured_sample_items: 10_000 })
    const pick = (k: number) => Math.floor((k * (n - 1)) / 9999)
    const p = await project('t', input, pol)
    expect(p.evidence).toMatchObject({
      loss_mode: 'composite',
      transform_algorithm: `${ALG.sample}+${ALG.headTail}`,
    })
    const { head, tail, total } = splitCut(p.output)
    expect(
      head.startsWith(JSON.stringify([item(0), item(pick(1)), item(pick(2))]).slice(0, -1)),
    ).toBe(true)
    expect(
      tail.endsWith(
        `${JSON.stringify(item(n - 1))}]\n[a3s: sampled 10000 of ${n} items of a top-level JSON array, evenly spaced]`,
      ),
    ).toBe(true)
    expect(total).toBeGreaterThan(102400)
    expect(total).toBeLessThan(byteLength(input))
  })
})

describe('artifacts through a session', () => {
  const noArgs = { type: 'object', additionalProperties: false, properties: {} } as const

  function recordingStore(inner: ArtifactStore = memoryArtifactStore()) {
    const puts: string[] = []
    const store: ArtifactStore = {
      put: async (uri, bytes) => {
        puts.push(uri)
        await inner.put(uri, bytes)
      },
      get: (uri) => inner.get(uri),
    }
    return { store, puts }
  }

  const evidenceOf = (r: ToolResult) => r.metadata?.a3s_tool_result_evidence as ToolResultEvidenceV1

  it('stores the original of a lossy read and hands it back byte for byte', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `${i} ${'é漢😀x'.repeat(20)}`)
    const session = await Agent.create().session(memoryWorkspace({ 'big.txt': lines.join('\n') }))
    const r = await session.tool('read', { file_path: 'big.txt' })
    expect(r.exitCode).toBe(0)
    const e = evidenceOf(r)
    expect(e.original_bytes).toBeGreaterThan(102400)
    expect(e.loss_mode).toBe('bounded_preview')
    const hex = e.content_digest.slice('sha256:'.length)
    expect(e.content_ref).toBe(`a3s://tool-output/read/${hex}`)
    const artifact = await session.getArtifact(e.content_ref)
    expect(artifact).toBeInstanceOf(Uint8Array)
    expect(artifact!.length).toBe(e.original_bytes)
    expect(sha(artifact!)).toBe(hex)
    const full = strict.decode(artifact!)
    expect(full.startsWith(splitCut(r.output).head)).toBe(true)
    for (const [i, line] of lines.entries()) expect(full).toContain(`${i + 1}\t${line}`)
    expect(byteLength(r.output)).toBeLessThanOrEqual(102400)
    expect(e.projected_bytes).toBe(byteLength(r.output))
  })

  it('stores exactly the bytes a custom tool returned; lossless results store nothing', async () => {
    const big = uniqueLines(150_000) + 'é😀'.repeat(1000)
    let out = big
    const tool: CustomTool = {
      name: 'dump',
      description: 'dumps',
      parameters: noArgs,
      run: () => out,
    }
    const { store, puts } = recordingStore()
    for (const [, pol] of PRESETS) {
      puts.length = 0
      const session = await Agent.create().session(memoryWorkspace(), {
        tools: [tool],
        artifactStore: store,
        toolResultTransformPolicy: pol,
      })
      out = big
      const r = await session.tool('dump', {})
      const e = evidenceOf(r)
      expect(e.content_ref).toBe(`a3s://tool-output/dump/${sha(big)}`)
      expect(r.output).toBe((await projectOutput('dump', big, pol)).output)
      expect(e).toEqual((await projectOutput('dump', big, pol)).evidence)
      const bytes = await session.getArtifact(e.content_ref)
      expect(Buffer.from(bytes!).equals(bytesOf(big))).toBe(true)
      expect(puts).toEqual([e.content_ref])

      out = 'small output'
      const small = await session.tool('dump', {})
      expect(small.output).toBe('small output')
      expect(evidenceOf(small)).toMatchObject({
        loss_mode: 'none',
        content_ref: `inline:sha256:${sha('small output')}`,
      })
      expect(puts).toHaveLength(1)
      expect(await session.getArtifact(artifactUri('dump', sha('small output')))).toBeUndefined()
    }
  })

  it('projects failures too and keeps the typed error', async () => {
    const big = uniqueLines(120_000)
    const tool: CustomTool = {
      name: 'fails',
      description: 'fails loudly',
      parameters: noArgs,
      run: () => toolFailure('fails', big, { type: 'invalid_argument', message: 'bad' }),
    }
    const session = await Agent.create().session(memoryWorkspace(), { tools: [tool] })
    const r = await session.tool('fails', {})
    expect(r.exitCode).toBe(1)
    expect(r.errorKind).toEqual({ type: 'invalid_argument', message: 'bad' })
    const e = evidenceOf(r)
    expect(e.loss_mode).toBe('bounded_preview')
    expect(Buffer.from((await session.getArtifact(e.content_ref))!).equals(bytesOf(big))).toBe(true)
  })

  it('loses the oldest artifact when the session store is full', async () => {
    let out = ''
    const tool: CustomTool = {
      name: 'dump',
      description: 'dumps',
      parameters: noArgs,
      run: () => out,
    }
    const session = await Agent.create().session(memoryWorkspace(), {
      tools: [tool],
      artifactStore: memoryArtifactStore(250_000),
    })
    const refs: string[] = []
    for (const seed of ['a', 'b', 'c']) {
      out = seed + uniqueLines(120_000)
      refs.push(evidenceOf(await session.tool('dump', {})).content_ref)
    }
    expect(await session.getArtifact(refs[0]!)).toBeUndefined()
    expect(await session.getArtifact(refs[1]!)).toHaveLength(120_001)
    expect(await session.getArtifact(refs[2]!)).toHaveLength(120_001)
  })
})

describe('memoryArtifactStore', () => {
  const blob = (n: number, fill = 1) => new Uint8Array(n).fill(fill)

  it('evicts the least recently used artifacts when full', async () => {
    const store = memoryArtifactStore(100)
    await store.put('a3s://tool-output/t/a', blob(40, 1))
    await store.put('a3s://tool-output/t/b', blob(40, 2))
    expect(await store.get('a3s://tool-output/t/a')).toEqual(blob(40, 1)) // a is now newer than b
    await store.put('a3s://tool-output/t/c', blob(40, 3))
    expect(await store.get('a3s://tool-output/t/b')).toBeUndefined()
    expect(await store.get('a3s://tool-output/t/a')).toEqual(blob(40, 1))
    expect(await store.get('a3s://tool-output/t/c')).toEqual(blob(40, 3))
    expect(store.bytes).toBe(80)
    expect(store.evicted).toBe(1)
    // One big artifact evicts as many as needed, oldest first.
    await store.put('a3s://tool-output/t/d', blob(90, 4))
    expect(store.evicted).toBe(3)
    expect(store.bytes).toBe(90)
    expect(await store.get('a3s://tool-output/t/a')).toBeUndefined()
    expect(await store.get('a3s://tool-output/t/c')).toBeUndefined()
    expect(await store.get('a3s://tool-output/t/d')).toEqual(blob(90, 4))
  })

  it('fills up to exactly its cap', async () => {
    const store = memoryArtifactStore(100)
    await store.put('u1', blob(50))
    await store.put('u2', blob(50))
    expect(store.bytes).toBe(100)
    expect(store.evicted).toBe(0)
    await store.put('u3', blob(100))
    expect(store.bytes).toBe(100)
    expect(store.evicted).toBe(2)
    expect(await store.get('u3')).toHaveLength(100)
  })

  it('ignores an artifact larger than the cap and keeps the others', async () => {
    const store = memoryArtifactStore(100)
    await store.put('small', blob(60))
    await store.put('huge', blob(101))
    expect(await store.get('huge')).toBeUndefined()
    expect(await store.get('small')).toEqual(blob(60))
    expect(store.bytes).toBe(60)
    expect(store.evicted).toBe(0)
  })

  it('is immutable: storing the same URI again is a no-op, and bytes are copied', async () => {
    const store = memoryArtifactStore(1000)
    const original = blob(10, 7)
    await store.put('u', original)
    original.fill(0) // the caller's buffer changes afterwards
    await store.put('u', blob(20, 9))
    expect(store.bytes).toBe(10)
    expect(store.evicted).toBe(0)
    const got = await store.get('u')
    expect(got).toEqual(blob(10, 7))
    got!.fill(1) // so does a reader's copy
    expect(await store.get('u')).toEqual(blob(10, 7))
    expect(await store.get('missing')).toBeUndefined()
  })

  it('defaults to 64 MiB', async () => {
    const store = memoryArtifactStore()
    await store.put('a', blob(64 * 1024 * 1024))
    expect(store.bytes).toBe(64 * 1024 * 1024)
    await store.put('b', blob(1))
    expect(store.evicted).toBe(1)
    expect(await store.get('a')).toBeUndefined()
  })
})
