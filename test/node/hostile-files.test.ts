import { execFileSync } from 'node:child_process'
import { mkdtempSync, openSync, closeSync, constants, rmSync, writeFileSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Agent, WorkspacePath } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

// Files that are not what a read expects: a FIFO must be refused at once, never waited on.

let root: string
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'isoagent-hostile-'))
})
afterEach(() => {
  // Should a read hang on the FIFO (the bug), a writer end lets the blocked threads go.
  try {
    const fd = openSync(join(root, 'pipe'), constants.O_WRONLY | constants.O_NONBLOCK)
    closeSync(fd)
  } catch {
    // no reader waiting, or no FIFO
  }
  rmSync(root, { recursive: true, force: true })
})

describe('a FIFO in the workspace', () => {
  for (const syncMetadata of [true, false])
    it(`is refused as invalid_argument by 8 concurrent reads (syncMetadata ${syncMetadata}), the thread pool still answering`, async () => {
      execFileSync('mkfifo', [join(root, 'pipe')])
      writeFileSync(join(root, 'ok.txt'), 'fine\n')
      const ws = localWorkspace(root, { syncMetadata })
      const session = await Agent.create().session(ws)
      try {
        const path = WorkspacePath.parse('pipe')
        const reads = [
          ...Array.from({ length: 4 }, () => session.tool('read', { file_path: 'pipe' })),
          ...Array.from({ length: 2 }, () =>
            ws.read(path).then(
              () => 'read',
              (e) => e,
            ),
          ),
          ...Array.from({ length: 2 }, () =>
            ws.readStream(path).then(
              () => 'read',
              (e) => e,
            ),
          ),
        ]
        // The thread pool must still serve an unrelated stat at once.
        const stat = await Promise.race([
          fsp.stat(join(root, 'ok.txt')).then(() => 'answered'),
          new Promise((done) => setTimeout(() => done('stalled'), 2000)),
        ])
        expect(stat).toBe('answered')
        const settled = await Promise.race([
          Promise.all(reads),
          new Promise<'hung'>((done) => setTimeout(() => done('hung'), 5000)),
        ])
        expect(settled).not.toBe('hung')
        const results = settled as unknown[]
        for (const r of results.slice(0, 4))
          expect(r).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
        for (const e of results.slice(4)) expect(e).toMatchObject({ code: 'invalid_argument' })
        expect(await session.readFile('ok.txt')).toContain('fine')
      } finally {
        await session.close()
      }
    })
})
