import { afterEach, describe, expect, it } from 'vitest'
import {
  Agent,
  memoryWorkspace,
  REDACTED,
  ToolResultTransformPolicy,
  type SessionEvent,
} from '../../adapters/index.ts'
import '../../adapters/node/index.ts'
import { cleanupHarnesses, harness, recordEvents, settle, WORKSPACE_KINDS } from './helpers.ts'

afterEach(cleanupHarnesses)

const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE'
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
const OPENAI = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789'
const PRIVATE_KEY =
  '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----'
const BEARER = 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature'

describe.each(WORKSPACE_KINDS)('sanitisation on %s workspace', (kind) => {
  it('redacts host secrets and credential patterns from outputs, metadata and events', async () => {
    const secret = 'hunter2-very-secret'
    const content =
      [
        `password=${secret}`,
        `aws_access_key_id=${AWS_KEY}`,
        `aws_secret_access_key = ${AWS_SECRET}`,
        OPENAI,
        PRIVATE_KEY,
        BEARER,
        'plain line',
      ].join('\n') + '\n'
    const h = await harness(kind, { 'creds.env': content }, { redactSecrets: [secret] })
    const rec = recordEvents(h.session)
    const read = await h.session.tool('read', { file_path: 'creds.env' })
    const write = await h.session.tool('write', { file_path: 'copy.env', content })
    const edit = await h.session.tool('edit', {
      file_path: 'copy.env',
      old_string: 'plain line',
      new_string: `plain ${secret}`,
    })
    await settle()
    rec.stop()
    const everything = JSON.stringify([
      read,
      write,
      edit,
      read.metadata,
      write.metadata,
      edit.metadata,
      rec.events,
    ])
    for (const leaked of [
      secret,
      AWS_KEY,
      AWS_SECRET,
      OPENAI,
      'MIIEowIBAAKCAQEA7',
      'eyJhbGciOiJIUzI1NiJ9',
    ]) {
      expect(everything, leaked).not.toContain(leaked)
    }
    expect(read.output).toContain(`password=${REDACTED}`)
    // The name a secret is given stays, so a reader knows what was redacted.
    expect(read.output).toContain(`aws_secret_access_key = ${REDACTED}`)
    expect(read.output).toContain('plain line')
    expect(
      rec.events.some((e) => e.type === 'tool_start' && JSON.stringify(e).includes(REDACTED)),
    ).toBe(true)
    // The files themselves are untouched: redaction is about what is shown.
    expect(await h.file('copy.env')).toBe(content.replace('plain line', `plain ${secret}`))
  })

  it('keeps redacted secrets out of stored artifacts too', async () => {
    const secret = 'top-secret-token-value'
    const h = await harness(
      kind,
      { 'big.txt': `${secret}\n` + `${'filler '.repeat(20)}\n`.repeat(3000) },
      { redactSecrets: [secret] },
    )
    const r = await h.session.tool('read', { file_path: 'big.txt' })
    const evidence = r.metadata!.a3s_tool_result_evidence as {
      content_ref: string
      loss_mode: string
    }
    expect(evidence.loss_mode).toBe('bounded_preview')
    const artifact = new TextDecoder().decode(await h.session.getArtifact(evidence.content_ref))
    expect(artifact).toContain(REDACTED)
    expect(artifact).not.toContain(secret)
  })
})

describe('snapshot and resume', () => {
  it('snapshots as plain JSON and resumes a local session with the same projection', async () => {
    const h = await harness(
      'local',
      { 'a.txt': 'a\n' },
      {
        toolResultTransformPolicy: ToolResultTransformPolicy.contextEfficient(),
        permissions: { deny: ['write(secrets/**)'] },
        budget: { maxToolCalls: 5 },
        toolTimeoutMs: { read: 1000 },
      },
    )
    await h.session.tool('read', { file_path: 'a.txt' })
    const snapshot = h.session.snapshot()
    const json = JSON.parse(JSON.stringify(snapshot)) as typeof snapshot
    expect(json).toEqual(snapshot)
    expect(json.workspace).toEqual({ kind: 'local', root: h.workspace.capabilities.localRoot })
    expect(json.tool_result_transform_policy).toEqual(ToolResultTransformPolicy.contextEfficient())
    expect(json.budget.used.tool_calls).toBe(1)

    const agent = Agent.create()
    const resumed = await agent.resumeSession(json)
    expect(resumed.toolResultTransformPolicy).toEqual(ToolResultTransformPolicy.contextEfficient())
    expect(
      (await resumed.governedTool('write', { file_path: 'secrets/x', content: 'x' })).errorKind
        ?.type,
    ).toBe('permission_denied')
    expect((await resumed.readFile('a.txt')).trim()).toBe('1\ta')
    // The denied write never reached the budget gate: 1 call before, 1 read after resuming.
    expect(resumed.snapshot().budget.used.tool_calls).toBe(2)
    const same = await agent.resumeSession(json, {
      toolResultTransformPolicy: ToolResultTransformPolicy.contextEfficient(),
    })
    await same.close()
    await expect(
      agent.resumeSession(json, {
        toolResultTransformPolicy: ToolResultTransformPolicy.conservative(),
      }),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('different toolResultTransformPolicy'),
    })
    await resumed.close()
  })

  it('needs the workspace passed in for memory sessions, and refuses broken snapshots', async () => {
    const session = await Agent.create().session(memoryWorkspace({ 'a.txt': 'a' }))
    const snapshot = session.snapshot()
    await expect(Agent.create().resumeSession(snapshot)).rejects.toMatchObject({
      code: 'unsupported',
    })
    const resumed = await Agent.create().resumeSession(snapshot, {
      workspace: memoryWorkspace({ 'b.txt': 'b' }),
    })
    expect(resumed.toolResultTransformPolicy).toEqual(ToolResultTransformPolicy.conservative())
    for (const broken of [
      null,
      {},
      { ...snapshot, schema: 'other' },
      { ...snapshot, tool_result_transform_policy: { schema: 'x' } },
      { ...snapshot, workspace: null },
    ]) {
      await expect(
        Agent.create().resumeSession(broken as never, { workspace: memoryWorkspace() }),
      ).rejects.toMatchObject({ code: 'invalid_argument' })
    }
  })

  it('refuses invalid policies and unknown options at session creation', async () => {
    for (const options of [
      {
        toolResultTransformPolicy: {
          ...ToolResultTransformPolicy.conservative(),
          max_output_bytes: 200_000,
        },
      },
      { toolResultTransformPolicy: { ...ToolResultTransformPolicy.contextEfficient(), extra: 1 } },
      {
        toolResultTransformPolicy: {
          ...ToolResultTransformPolicy.contextEfficient(),
          tail_bytes: 40_000,
        },
      },
      { toolTimeoutMs: 0 },
      { toolTimeoutMs: { read: -5 } },
      { hookTimeoutMs: 0 },
      { redactSecrets: 'x' },
      { permisions: {} },
    ]) {
      await expect(
        Agent.create().session(memoryWorkspace(), options as never),
        JSON.stringify(options),
      ).rejects.toMatchObject({ code: 'invalid_argument' })
    }
  })
})

describe('evidence on every result', () => {
  it('attaches a3s.code.tool-result-evidence.v1 to successes, failures and rejections', async () => {
    const h = await harness('memory', { 'a.txt': 'a\n' }, { permissions: { deny: ['write'] } })
    const results = [
      await h.session.tool('read', { file_path: 'a.txt' }),
      await h.session.tool('read', { file_path: 'missing' }),
      await h.session.tool('read', { bogus: 1 }),
      await h.session.governedTool('write', { file_path: 'b', content: '' }),
      await h.session.tool('nope', {}),
    ]
    for (const r of results) {
      expect(r.metadata?.a3s_tool_result_evidence).toMatchObject({
        schema: 'a3s.code.tool-result-evidence.v1',
        loss_mode: 'none',
      })
    }
    const events: SessionEvent[] = []
    expect(events).toEqual([])
  })
})
