import { describe, expect, it } from 'vitest'
import { checkNetOptions } from '../../src/net/net-options.ts'
import { hostNameAllowed } from '../../src/net/url-rules.ts'

// Each of these would otherwise be a rule that silently matches nothing.
const malformed = ['', 'host:notaport', 'http://x', 'a b', ':80', 'x'.repeat(10_000), '[::1', 'h:0']

describe('net.allowHosts entries', () => {
  for (const entry of malformed)
    it(`refuses ${JSON.stringify(entry.slice(0, 20))}`, () => {
      expect(() => checkNetOptions({ allowHosts: ['localhost', entry] })).toThrow(
        `(not one: ${JSON.stringify(entry.length > 64 ? `${entry.slice(0, 61)}...` : entry)})`,
      )
    })

  const wellFormed = [
    'localhost',
    'mcp.internal:8080',
    '127.0.0.1',
    '127.0.0.1:3000',
    '::1',
    '[::1]',
    '[::1]:443',
  ]
  for (const entry of wellFormed)
    it(`accepts ${entry}`, () => {
      expect(() => checkNetOptions({ allowHosts: [entry] })).not.toThrow()
    })

  it('accepted entries match what they name', () => {
    expect(hostNameAllowed('127.0.0.1', '3000', ['127.0.0.1:3000'])).toBe(true)
    expect(hostNameAllowed('::1', '443', ['[::1]:443'])).toBe(true)
  })
})

describe('isoagent serve --net-allow-host', () => {
  it('refuses a malformed entry at start with exit code 2 and says why', async () => {
    const { main } = await import('../../bin/cli.ts')
    for (const value of malformed) {
      let said = ''
      const err = { write: (s: string) => ((said += s), true) } as unknown as typeof process.stderr
      const code = await main(
        ['serve', '--workspace', 'memory', '--port', '0', '--net-allow-host', value],
        process.stdout,
        err,
      )
      expect(code).toBe(2)
      expect(said).toContain('net.allowHosts must be')
    }
  }, 30_000)
})
