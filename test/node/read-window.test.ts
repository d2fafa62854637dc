import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Agent, WorkspacePath, type WorkspaceServices } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

const root = mkdtempSync(join(tmpdir(), 'isoagent-window-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('read on a large file', () => {
  it('stops reading 8 MiB after the page instead of fetching the whole file', async () => {
    const line = 'y'.repeat(99) + '\n'
    writeFileSync(join(root, 'big.log'), line.repeat(400_000)) // 40 MB
    const inner = localWorkspace(root)
    let streamed = 0
    const counting: WorkspaceServices = {
      ...inner,
      async readStream(path: WorkspacePath, range) {
        const reader = (await inner.readStream(path, range)).getReader()
        return new ReadableStream<Uint8Array>({
          async pull(controller) {
            const { done, value } = await reader.read()
            if (done) return controller.close()
            streamed += value.length
            controller.enqueue(value)
          },
          cancel: () => reader.cancel(),
        })
      },
    }
    const session = await Agent.create().session(counting)
    const r = await session.tool('read', { file_path: 'big.log', offset: 10, limit: 5 })
    expect(r.exitCode).toBe(0)
    expect(r.output.split('\n')).toHaveLength(6)
    expect(r.metadata?.range).toMatchObject({
      total_lines: null,
      eof: false,
      next_offset: 15,
      returned_lines: 5,
    })
    expect(r.metadata?.file).toMatchObject({ bytes: 40_000_000 })
    expect(streamed).toBeLessThan(12 * 1024 * 1024)
    const small = await session.tool('read', { file_path: 'big.log', offset: 399_998 })
    expect(small.metadata?.range).toMatchObject({
      total_lines: 400_000,
      eof: true,
      next_offset: null,
      returned_lines: 2,
    })
  })
})
