import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ByteIndex, WorkspaceServices } from '../../adapters/index.ts'

// Node's memchr (`Buffer.prototype.indexOf`) called on bytes that are no Buffer: how the local
// workspace has the search find bytes. Spied on before any adapter is loaded, so the spy is what
// the local adapter finds there.
const memchr = vi.spyOn(Buffer.prototype, 'indexOf')
const onPlainBytes = () => memchr.mock.contexts.filter((self) => !Buffer.isBuffer(self)).length

const { Agent, memoryWorkspace } = await import('../../adapters/index.ts')
const { localWorkspace } = await import('../../adapters/node/index.ts')

const files: Record<string, string> = {
  'a.txt': 'alpha\nneedle one\nbeta\n',
  'b/c.txt': 'gamma\nNeedle two\nneedle three\n',
  'b/d.txt': 'nothing here\n',
}
const roots: string[] = []
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})

async function grep(ws: WorkspaceServices, query: string, caseSensitive = true) {
  const session = await Agent.create().session(ws)
  try {
    const r = await session.tool('search', {
      mode: 'grep',
      query,
      case_sensitive: caseSensitive,
    })
    expect(r.exitCode).toBe(0)
    return r.output
  } finally {
    await ws.close?.()
  }
}

describe('byte search per workspace', () => {
  beforeEach(() => {
    memchr.mockClear()
  })

  it("a memory workspace keeps the typed array's indexOf once the local adapter is loaded", async () => {
    expect(await grep(memoryWorkspace(files), 'needle')).toBe(
      'a.txt:2:needle one\nb/c.txt:3:needle three',
    )
    expect(await grep(memoryWorkspace(files), 'needle', false)).toBe(
      'a.txt:2:needle one\nb/c.txt:2:Needle two\nb/c.txt:3:needle three',
    )
    expect(onPlainBytes()).toBe(0)
  })

  it('a local workspace has its searches find bytes by memchr', async () => {
    const root = mkdtempSync(join(tmpdir(), 'isoagent-byte-index-'))
    roots.push(root)
    writeFileSync(join(root, 'a.txt'), files['a.txt']!)
    expect(await grep(localWorkspace(root, { searchThreads: 0 }), 'needle')).toBe(
      'a.txt:2:needle one',
    )
    expect(onPlainBytes()).toBeGreaterThan(0)
  })

  it("a workspace's own byte index serves its searches, and only them", async () => {
    let calls = 0
    const counting: ByteIndex = {
      indexOf: (bytes, byte, from) => {
        calls++
        return bytes.indexOf(byte, from)
      },
      nsPerByte: 0.3,
    }
    const own = { ...memoryWorkspace(files), byteIndex: counting }
    expect(await grep(own, 'needle')).toBe('a.txt:2:needle one\nb/c.txt:3:needle three')
    expect(calls).toBeGreaterThan(0)
    const seen = calls
    expect(await grep(memoryWorkspace(files), 'needle')).toBe(
      'a.txt:2:needle one\nb/c.txt:3:needle three',
    )
    expect(calls).toBe(seen)
  })
})
