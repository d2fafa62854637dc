import { describe, expect, it } from 'vitest'
import { IsoagentError, WorkspacePath } from '../../adapters/index.ts'

const code = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    return (error as IsoagentError).code
  }
  return 'ok'
}

describe('WorkspacePath.parse', () => {
  it('normalises relative forms', () => {
    expect(WorkspacePath.parse('a/b/c')).toBe('a/b/c')
    expect(WorkspacePath.parse('./a//b/./c/')).toBe('a/b/c')
    expect(WorkspacePath.parse('a/x/../b')).toBe('a/b')
    expect(WorkspacePath.parse('.')).toBe('')
    expect(WorkspacePath.parse('')).toBe('')
    expect(WorkspacePath.parse('a/..')).toBe('')
    expect(WorkspacePath.parse('héllo wörld/日本.txt')).toBe('héllo wörld/日本.txt')
    expect(WorkspacePath.parse('...')).toBe('...')
    expect(WorkspacePath.parse('..foo/bar..')).toBe('..foo/bar..')
  })

  it('contains absolute paths in the root', () => {
    expect(WorkspacePath.parse('/a/b')).toBe('a/b')
    expect(WorkspacePath.parse('/repo/a', { root: '/repo' })).toBe('a')
    expect(WorkspacePath.parse('/repo', { root: '/repo/' })).toBe('')
    expect(code(() => WorkspacePath.parse('/repo2/a', { root: '/repo' }))).toBe('path_escape')
    expect(code(() => WorkspacePath.parse('/etc/passwd', { root: '/repo' }))).toBe('path_escape')
    expect(code(() => WorkspacePath.parse('/repo/../etc', { root: '/repo' }))).toBe('path_escape')
  })

  it('refuses escapes and hostile input with typed codes', () => {
    expect(code(() => WorkspacePath.parse('..'))).toBe('path_escape')
    expect(code(() => WorkspacePath.parse('../a'))).toBe('path_escape')
    expect(code(() => WorkspacePath.parse('a/../../b'))).toBe('path_escape')
    for (const bad of [
      'a\0b',
      'a\nb',
      'a\tb',
      'a\u007fb',
      'a\u0085b',
      '..\\a',
      'a\\b',
      '%2e%2e/a',
      '%2F',
      'a%5cb',
      'a%00',
      'C:/x',
      'c:\\x',
    ]) {
      expect(
        code(() => WorkspacePath.parse(bad)),
        JSON.stringify(bad),
      ).toBe('invalid_path')
    }
    expect(code(() => WorkspacePath.parse('x'.repeat(256)))).toBe('invalid_path')
    expect(code(() => WorkspacePath.parse('é'.repeat(128)))).toBe('invalid_path')
    expect(code(() => WorkspacePath.parse('a/'.repeat(2100)))).toBe('invalid_path')
    expect(code(() => WorkspacePath.parse('x'.repeat(255)))).toBe('ok')
  })

  it('joins, splits and displays', () => {
    const p = WorkspacePath.parse('a/b/c.txt')
    expect(WorkspacePath.parent(p)).toBe('a/b')
    expect(WorkspacePath.basename(p)).toBe('c.txt')
    expect(WorkspacePath.parent(WorkspacePath.parse('c'))).toBe('')
    expect(WorkspacePath.child(WorkspacePath.root, 'x')).toBe('x')
    expect(WorkspacePath.display(WorkspacePath.root)).toBe('.')
  })
})

describe('IsoagentError', () => {
  it('carries code, data and cause, and serialises', () => {
    const cause = new Error('ENOENT: low level')
    const error = new IsoagentError('not_found', 'file not found: a.txt', {
      data: { path: 'a.txt' },
      cause,
    })
    expect(error).toBeInstanceOf(Error)
    expect(error.cause).toBe(cause)
    expect(error.toJSON()).toEqual({
      name: 'IsoagentError',
      code: 'not_found',
      message: 'file not found: a.txt',
      data: { path: 'a.txt' },
      cause: 'ENOENT: low level',
    })
    expect(JSON.parse(JSON.stringify(error))).toEqual(error.toJSON())
    expect(IsoagentError.is(error, 'not_found')).toBe(true)
    expect(IsoagentError.is(error, 'io')).toBe(false)
    expect(IsoagentError.is(cause)).toBe(false)
  })
})
