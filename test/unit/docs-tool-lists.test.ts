// The tool lists a reader finds in docs/workspaces.md and the README are what toolNames() says.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

const repo = resolve(import.meta.dirname, '../..')
const dir = mkdtempSync(join(tmpdir(), 'isoagent-docs-tools-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The tools column of docs/workspaces.md's table, for the row naming `factory`. */
function documented(factory: string): string[] {
  const table = readFileSync(join(repo, 'docs/workspaces.md'), 'utf8')
  const row = table.split('\n').find((line) => line.startsWith(`| \`${factory}`))
  if (row === undefined) throw new Error(`no row for ${factory}`)
  const cells = row.split('|').map((cell) => cell.trim())
  return cells[4]!.replace(/\*\*/g, '').split(/,\s*/)
}

describe('documented tool lists', () => {
  it('docs/workspaces.md lists what memory and local sessions offer, in order', async () => {
    const agent = Agent.create()
    const memory = await agent.session(memoryWorkspace())
    const local = await agent.session(localWorkspace(dir))
    expect(documented('memoryWorkspace')).toEqual(memory.toolNames())
    expect(documented('localWorkspace')).toEqual(local.toolNames())
    await memory.close()
    await local.close()
  })

  it("the README's local-disk example prints what toolNames() returns", async () => {
    const readme = readFileSync(join(repo, 'README.md'), 'utf8')
    const shown = /session\.toolNames\(\)\n((?:\/\/.*\n)+)/.exec(readme)
    expect(shown).not.toBeNull()
    const names = [...shown![1]!.matchAll(/'([a-z_]+)'/g)].map((m) => m[1])
    const local = await Agent.create().session(localWorkspace(dir))
    expect(names).toEqual(local.toolNames())
    await local.close()
  })
})
