import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { GENERATED_PATH, generateValidators } from '../../scripts/gen-validators.ts'
import { validateToolArgs } from '../../src/kernel/validate.ts'

describe('precompiled validators', () => {
  it('are up to date with the tool schemas (run npm run gen:validators)', () => {
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(generateValidators())
  })

  it('need no eval and no runtime require', () => {
    const code = readFileSync(GENERATED_PATH, 'utf8')
    expect(code).not.toMatch(/new Function|\beval\(|\brequire\(/)
  })

  it('explain the first problem in words a caller can act on', () => {
    expect(validateToolArgs('read', { file_path: 'a', bogus: 1 })).toBe(
      'arguments: unknown property "bogus"',
    )
    expect(validateToolArgs('read', { files: [{ path: 'a', offset: -1 }] })).toBe(
      'files[0].offset must be >= 0',
    )
    expect(validateToolArgs('write', { file_path: 'a' })).toBe(
      'arguments: missing required property "content"',
    )
    expect(validateToolArgs('write', { file_path: 'a', content: '', mode: 'x' })).toBe(
      'mode must be one of ["overwrite","append"]',
    )
    expect(validateToolArgs('ls', {})).toBeUndefined()
    expect(() => validateToolArgs('nope', {})).toThrow(/no precompiled validator/)
  })
})
