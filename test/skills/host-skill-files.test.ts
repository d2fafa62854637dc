// Issue 30: a host skill's bundled files (its folder is outside the workspace) are listed by the
// Skill tool as `skill://<name>/<file>`, which `read` opens read-only: contained in that skill's
// own folder (`../` and symlinks out refused typed), capped in size. Workspace skills keep
// listing workspace paths. Real folders on disk throughout.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMcpServer } from '../../edge/mcp/index.ts'
import { streamableServer } from '../mcp-client/http-servers.ts'
import { Agent, SKILL_LIMITS, type Session } from '../../adapters/index.ts'
import { hostSkillDirs, localWorkspace } from '../../adapters/node/index.ts'

const skill = (fm: string, body: string) => `---\n${fm}\n---\n${body}`

describe('host skill files through skill:// (Node)', () => {
  let host = ''
  let work = ''
  let outside = ''
  let session: Session
  beforeAll(async () => {
    host = mkdtempSync(join(tmpdir(), 'isoagent-skill-files-host-'))
    work = mkdtempSync(join(tmpdir(), 'isoagent-skill-files-work-'))
    outside = mkdtempSync(join(tmpdir(), 'isoagent-skill-files-out-'))
    mkdirSync(join(host, 'deploy/scripts'), { recursive: true })
    mkdirSync(join(host, 'deploy/refs'), { recursive: true })
    writeFileSync(
      join(host, 'deploy/SKILL.md'),
      skill('name: deploy\ndescription: Deploy to staging.', 'Run scripts/run.sh.\n'),
    )
    writeFileSync(join(host, 'deploy/scripts/run.sh'), '#!/bin/sh\necho deploy\n')
    writeFileSync(join(host, 'deploy/refs/my notes.md'), 'line one\nline two\nline three\n')
    // Over the cap by one byte.
    writeFileSync(join(host, 'deploy/big.txt'), 'a'.repeat(SKILL_LIMITS.maxBundledFileBytes + 1))
    // A sibling skill and a file outside every skill folder.
    mkdirSync(join(host, 'other'), { recursive: true })
    writeFileSync(
      join(host, 'other/SKILL.md'),
      skill('name: other\ndescription: Another skill.', 'x\n'),
    )
    writeFileSync(join(host, 'other/secret.txt'), 'sibling secret\n')
    writeFileSync(join(outside, 'passwd'), 'host secret\n')
    symlinkSync(join(outside, 'passwd'), join(host, 'deploy/refs/escape.txt'))
    symlinkSync(join(host, 'other'), join(host, 'deploy/sibling'))
    mkdirSync(join(work, '.agents/skills/local'), { recursive: true })
    writeFileSync(
      join(work, '.agents/skills/local/SKILL.md'),
      skill('name: local\ndescription: A workspace skill.', 'Read helper.py.\n'),
    )
    writeFileSync(join(work, '.agents/skills/local/helper.py'), 'print("hi")\n')
    session = await Agent.create().session(localWorkspace(work), {
      skills: { host: hostSkillDirs(host) },
    })
  })
  afterAll(async () => {
    await session.close()
    for (const d of [host, work, outside]) rmSync(d, { recursive: true, force: true })
  })

  it('lists bundled files as skill:// paths that read opens', async () => {
    const run = await session.tool('Skill', { skill_name: 'deploy' })
    expect(run.exitCode).toBe(0)
    const files = run.metadata?.files as string[]
    expect(files).toEqual([
      'skill://deploy/big.txt',
      'skill://deploy/refs/my%20notes.md',
      'skill://deploy/scripts/run.sh',
    ])
    expect(run.output).toContain('- skill://deploy/scripts/run.sh')
    expect(run.output).not.toContain(host)
    const script = await session.tool('read', { file_path: 'skill://deploy/scripts/run.sh' })
    expect(script.exitCode).toBe(0)
    expect(script.output).toBe('     1\t#!/bin/sh\n     2\techo deploy')
    const notes = await session.tool('read', {
      file_path: 'skill://deploy/refs/my%20notes.md',
      offset: 1,
      limit: 1,
    })
    expect(notes.output).toBe(
      '     2\tline two\n... (more lines available; continue with offset=2)',
    )
    // files mode too
    const both = await session.tool('read', {
      files: [{ path: 'skill://deploy/scripts/run.sh' }, { path: 'skill://deploy/SKILL.md' }],
    })
    expect(both.exitCode).toBe(0)
    expect(both.output).toContain('echo deploy')
    expect(both.output).toContain('Run scripts/run.sh.')
  })

  it('refuses ../ and symlinks out of the skill folder, typed', async () => {
    // (path_escape is reported to callers as permission_denied; the kernel's own path check
    // refuses a percent-encoded dot before the tool runs.)
    const cases: [string, string, string][] = [
      ['skill://deploy/../other/secret.txt', 'permission_denied', "leaves the skill's folder"],
      ['skill://deploy/%2E%2E/other/secret.txt', 'invalid_argument', 'percent-encoded dot'],
      ['skill://deploy/refs/escape.txt', 'permission_denied', "leaves the skill's folder"],
      ['skill://deploy/sibling/secret.txt', 'permission_denied', "leaves the skill's folder"],
    ]
    for (const [file_path, kind, message] of cases) {
      const r = await session.tool('read', { file_path })
      expect(r.exitCode, file_path).toBe(1)
      expect(r.errorKind, file_path).toMatchObject({ type: kind })
      expect(r.output, file_path).toContain(message)
      expect(r.output).not.toContain('host secret')
      expect(r.output).not.toContain('sibling secret')
    }
  })

  it('refuses a file over the cap, a missing file, an unknown skill and a directory', async () => {
    const big = await session.tool('read', { file_path: 'skill://deploy/big.txt' })
    expect(big).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
    expect(big.output).toContain(`larger than ${SKILL_LIMITS.maxBundledFileBytes} bytes`)
    const missing = await session.tool('read', { file_path: 'skill://deploy/nope.txt' })
    expect(missing).toMatchObject({ exitCode: 1, errorKind: { type: 'not_found' } })
    const unknown = await session.tool('read', { file_path: 'skill://nobody/x.txt' })
    expect(unknown).toMatchObject({ exitCode: 1, errorKind: { type: 'not_found' } })
    const dir = await session.tool('read', { file_path: 'skill://deploy/refs' })
    expect(dir).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
    expect(dir.output).toContain('is a directory')
    const bare = await session.tool('read', { file_path: 'skill://deploy' })
    expect(bare).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
    expect(bare.output).toContain('not a skill file path')
  })

  it('leaves a workspace skill as it was: workspace paths that read opens directly', async () => {
    const run = await session.tool('Skill', { skill_name: 'local' })
    expect(run.metadata?.files).toEqual(['.agents/skills/local/helper.py'])
    const read = await session.tool('read', { file_path: '.agents/skills/local/helper.py' })
    expect(read.output).toBe('     1\tprint("hi")')
    const viaUri = await session.tool('read', { file_path: 'skill://local/helper.py' })
    expect(viaUri).toMatchObject({ exitCode: 1, errorKind: { type: 'not_found' } })
  })

  it('serves the same files as MCP skill:// resources, bounded', async () => {
    const http = await streamableServer(() => createMcpServer(session))
    const client = new Client({ name: 'host-skills', version: '0' })
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(http.url)))
      const { resources } = await client.listResources()
      const uris = resources.map((r) => r.uri).filter((u) => u.startsWith('skill://deploy/'))
      expect(uris).toEqual([
        'skill://deploy/SKILL.md',
        'skill://deploy/big.txt',
        'skill://deploy/refs/my%20notes.md',
        'skill://deploy/scripts/run.sh',
      ])
      const script = await client.readResource({ uri: 'skill://deploy/scripts/run.sh' })
      expect(script.contents).toEqual([
        {
          uri: 'skill://deploy/scripts/run.sh',
          mimeType: 'text/x-shellscript',
          text: '#!/bin/sh\necho deploy\n',
        },
      ])
      await expect(client.readResource({ uri: 'skill://deploy/big.txt' })).rejects.toThrow(
        /too large \(over 8388608 bytes\)/,
      )
      await expect(client.readResource({ uri: 'skill://deploy/refs/escape.txt' })).rejects.toThrow(
        /Resource not found/,
      )
    } finally {
      await client.close()
      await http.close()
    }
  })
})
