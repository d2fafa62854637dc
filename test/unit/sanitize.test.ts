import { describe, expect, it } from 'vitest'
import { CREDENTIAL_PATTERNS, REDACTED, Sanitizer } from '../../src/kernel/sanitize.ts'

/** One credential of every built-in pattern's kind, each inside other text. */
const SAMPLES = [
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
  'key AKIAIOSFODNN7EXAMPLE here',
  'id ASIAY34FZKBOKMUTVV7A',
  'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'Aws_Secret_Access_Key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
  'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature',
  'OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789',
  'token sk-ant-api03-abcdefghijklmnopqrstuvwx',
  'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB in url',
  'gho_0123456789abcdefghijklmnopqrstuvwxyzAB',
  'slack xoxb-1234567890-abcdefghij',
  'slack xoxp-1234567890-abcdefghij',
  'ghs_0123456789abcdefghijklmnopqrstuvwxyzAB',
  'ghu_0123456789abcdefghijklmnopqrstuvwxyzAB',
  'ghr_0123456789abcdefghijklmnopqrstuvwxyzAB',
  'xoxa-1234567890-abcdefghij',
  'xoxo-1234567890-abcdefghij',
  'xoxr-1234567890-abcdefghij',
  'xoxs-1234567890-abcdefghij',
]

describe('Sanitizer', () => {
  it('redacts every built-in credential kind (the one-scan hint lets none through)', () => {
    const sanitizer = new Sanitizer()
    for (const sample of SAMPLES) {
      expect(
        CREDENTIAL_PATTERNS.some((p) => new RegExp(p.source, p.flags).test(sample)),
        sample,
      ).toBe(true)
      const out = sanitizer.text(sample)
      expect(out, sample).toContain(REDACTED)
      expect(out).not.toBe(sample)
    }
  })

  it('leaves text without credentials as it is, and redacts host secrets in any text', () => {
    const sanitizer = new Sanitizer(['hunter2'])
    const plain = 'node_modules/typescript/lib/lib.dom.d.ts\nsrc/index.ts\n'
    expect(sanitizer.text(plain)).toBe(plain)
    expect(sanitizer.text('password=hunter2 plain')).toBe(`password=${REDACTED} plain`)
    expect(sanitizer.text('hunter2 and ghp_0123456789abcdefghijklmnopqrstuvwxyzAB')).toBe(
      `${REDACTED} and ${REDACTED}`,
    )
  })
})

describe('Sanitizer against a global replace of each pattern', () => {
  /** What the sanitizer must give: each built-in pattern replaced over the whole text in turn. */
  const reference = (text: string) => {
    let out = text
    for (const pattern of CREDENTIAL_PATTERNS)
      out = out.replace(
        new RegExp(pattern.source, pattern.flags),
        (...args: unknown[]) =>
          ((args[args.length - 1] as { keep?: string } | undefined)?.keep ?? '') + REDACTED,
      )
    return out
  }
  /** Pieces that make hints, near misses, overlaps and word boundaries likely. */
  const PIECES = [
    ...SAMPLES,
    'AKIA',
    'ASIA',
    'ASIASIA',
    'AIDAIOSFODNN7EXAMPLEX',
    'IOSFODNN7EXAMPLE',
    '0123456789ABCDEF',
    'aws',
    'AWS_',
    'aws_',
    'Secret',
    'SECRET_',
    'secret',
    '_access',
    'Access_',
    'key',
    'KEY',
    '=',
    ': ',
    '"',
    "'",
    ' ',
    '\n',
    'x',
    '_',
    '-',
    '/',
    '+',
    'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'Bearer',
    'Bearer ',
    'abcdefgh',
    '.sig~',
    'sk-',
    'proj-',
    'ant-',
    'abcdefghijklmnopqrst',
    'gh',
    'ghp_',
    'gho_',
    'ghs_',
    'ghx_',
    'xox',
    'xoxb-',
    'xoxr-',
    'xoxq-',
    'xoxox',
    '0123456789',
    '-----BEGIN ',
    'RSA ',
    'PRIVATE KEY-----',
    '-----END RSA PRIVATE KEY-----',
    'é',
    '中文',
  ]
  it('gives exactly what the replaces give, on 3000 random texts', () => {
    const sanitizer = new Sanitizer()
    let seed = 7
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed % n
    }
    let redacted = 0
    for (let k = 0; k < 3000; k++) {
      let text = ''
      for (let n = 1 + random(14); n > 0; n--) text += PIECES[random(PIECES.length)]
      const want = reference(text)
      if (want !== text) redacted++
      expect(sanitizer.text(text), JSON.stringify(text)).toBe(want)
    }
    // The texts do exercise redaction.
    expect(redacted).toBeGreaterThan(500)
  })
})
