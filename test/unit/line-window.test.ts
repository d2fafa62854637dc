import { describe, expect, it } from 'vitest'
import { LineWindowCollector } from '../../src/text/line-window.ts'

const enc = new TextEncoder()

/** Feed `text` split at every possible chunk size, and check the window is the same. */
function collectInChunks(
  bytes: Uint8Array,
  chunk: number,
  offset: number,
  limit: number,
  maxLineChars = 2000,
) {
  const c = new LineWindowCollector({ offset, limit, maxLineChars, path: 't' })
  for (let i = 0; i < bytes.length; i += chunk) c.push(bytes.subarray(i, i + chunk))
  return c.finish()
}

describe('LineWindowCollector', () => {
  it('gives the same window whatever the chunking, across CRLF and multi-byte boundaries', () => {
    const bytes = enc.encode('\uFEFFαβγ\r\nline two\r\n\r\n日本語のテキスト\r\nlast')
    const whole = collectInChunks(bytes, bytes.length, 0, 100)
    expect(whole.lines.map((l) => l.text)).toEqual([
      'αβγ',
      'line two',
      '',
      '日本語のテキスト',
      'last',
    ])
    expect(whole).toMatchObject({ totalLines: 5, bom: true, eol: 'crlf', totalBytes: bytes.length })
    for (let chunk = 1; chunk < 12; chunk++) {
      expect(collectInChunks(bytes, chunk, 0, 100), `chunk ${chunk}`).toEqual(whole)
      expect(collectInChunks(bytes, chunk, 1, 2).lines.map((l) => l.text)).toEqual(['line two', ''])
    }
  })

  it('counts lines exactly', () => {
    expect(collectInChunks(enc.encode(''), 4, 0, 10).totalLines).toBe(0)
    expect(collectInChunks(enc.encode('\n'), 4, 0, 10).totalLines).toBe(1)
    expect(collectInChunks(enc.encode('a'), 4, 0, 10).totalLines).toBe(1)
    expect(collectInChunks(enc.encode('a\nb\n'), 1, 0, 10).totalLines).toBe(2)
    expect(collectInChunks(enc.encode('a\r\nb\n'), 1, 0, 10).eol).toBe('mixed')
    expect(collectInChunks(enc.encode('a\nb'), 1, 0, 10).eol).toBe('lf')
  })

  it('cuts long lines without keeping them and never splits a surrogate pair', () => {
    const line = '😀'.repeat(3000)
    const w = collectInChunks(enc.encode(line + '\nnext'), 1000, 0, 10, 2001)
    expect(w.lines[0]!.cut).toBe(true)
    expect(w.lines[0]!.text.length).toBe(2000)
    expect(w.lines[0]!.bytes).toBe(12000)
    expect(w.lines[1]!.text).toBe('next')
  })

  it('refuses binary content and invalid UTF-8 in the window only', () => {
    expect(() => collectInChunks(new Uint8Array([0x61, 0x0a, 0x00]), 1, 0, 10)).toThrow(/binary/)
    const bad = new Uint8Array([0x61, 0x0a, 0xff, 0x0a, 0x62])
    expect(() => collectInChunks(bad, 2, 0, 10)).toThrow(/UTF-8/)
    expect(collectInChunks(bad, 2, 2, 1).lines.map((l) => l.text)).toEqual(['b'])
  })
})
