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
