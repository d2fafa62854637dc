import { afterEach, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  memoryWorkspace,
  type Session,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { cleanupHarnesses, harness, WORKSPACE_KINDS } from './helpers.ts'

afterEach(cleanupHarnesses)

/** What `call` threw: it must be an IsoagentError. */
async function thrown(call: Promise<unknown>): Promise<IsoagentError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(IsoagentError)
  return error as IsoagentError
}

/** The helper's error carries the code that follows the result's errorKind, and the kind itself. */
async function expectCode(
  session: Session,
  call: Promise<unknown>,
  code: string,
  kind: Record<string, unknown>,
) {
  const error = await thrown(call)
  expect(error.code, error.message).toBe(code)
  expect(error.data.errorKind).toMatchObject(kind)
  expect(error.message.length).toBeGreaterThan(0)
  return { error, session }
}

/** `workspace` whose `stat` answers only after 300 ms, to run into a short tool deadline. */
function slowStat(workspace: WorkspaceServices): WorkspaceServices {
  return {
    ...workspace,
    stat: (path) =>
      new Promise((resolve) => setTimeout(resolve, 300)).then(() => workspace.stat(path)),
  }
}

describe.each(WORKSPACE_KINDS)('typed helper errors follow errorKind (%s)', (kind) => {
  it('readFile: not_found, permission_denied, unsupported, invalid_argument', async () => {
    const { session } = await harness(kind, { 'a.txt': 'a\n', 'dir/x.txt': 'x\n' })
    await session.writeFile('bin.dat', 'x\u0000y')
    await expectCode(session, session.readFile('missing.txt'), 'not_found', {
      type: 'not_found',
      path: 'missing.txt',
    })
    await expectCode(session, session.readFile('../outside.txt'), 'permission_denied', {
      type: 'permission_denied',
    })
    await expectCode(session, session.readFile('bin.dat'), 'unsupported', { type: 'unsupported' })
    await expectCode(session, session.readFile('dir'), 'invalid_argument', {
      type: 'invalid_argument',
    })
    await expectCode(session, session.readFile('a.txt', { offset: 9 }), 'invalid_argument', {
      type: 'invalid_argument',
    })
    expect(await session.readFile('a.txt')).toBe('     1\ta')
  })

  it('grep and glob: invalid_argument and not_found', async () => {
    const { session } = await harness(kind, { 'a.txt': 'a\n' })
    await expectCode(session, session.grep('('), 'invalid_argument', { type: 'invalid_argument' })
    await expectCode(session, session.grep('a', { path: 'nope' }), 'not_found', {
      type: 'not_found',
      path: 'nope',
    })
    await expectCode(session, session.glob('*', { path: 'nope' }), 'not_found', {
      type: 'not_found',
    })
    expect(await session.glob('*.txt')).toEqual(['a.txt'])
  })

  it('a hook that blocks is hook_denied, an exhausted budget permission_denied', async () => {
    const hooked = await harness(
      kind,
      { 'a.txt': 'a\n' },
      { hooks: { preToolUse: () => ({ block: 'frozen' }) } },
    )
    for (const call of [
      hooked.session.readFile('a.txt'),
      hooked.session.grep('a'),
      hooked.session.glob('*'),
    ]) {
      await expectCode(hooked.session, call, 'hook_denied', {
        type: 'hook_denied',
        reason: 'frozen',
      })
    }
    const budget = await harness(kind, { 'a.txt': 'a\n' }, { budget: { maxToolCalls: 1 } })
    await budget.session.readFile('a.txt')
    await expectCode(budget.session, budget.session.readFile('a.txt'), 'permission_denied', {
      type: 'permission_denied',
      message: expect.stringContaining('maxToolCalls=1'),
    })
  })
})

describe('typed helper errors: deadlines and missing tools', () => {
  it('a tool deadline is timeout', async () => {
    const session = await Agent.create().session(slowStat(memoryWorkspace({ 'a.txt': 'a\n' })), {
      toolTimeoutMs: 30,
    })
    await expectCode(session, session.readFile('a.txt'), 'timeout', {
      type: 'timeout',
      op: 'read',
      duration_ms: 30,
    })
    await expectCode(session, session.grep('a'), 'timeout', { type: 'timeout', op: 'search' })
    await expectCode(session, session.glob('*'), 'timeout', { type: 'timeout', op: 'search' })
    await session.close()
  })

  it('bash where the workspace cannot run commands is unsupported', async () => {
    const session = await Agent.create().session(memoryWorkspace())
    await expectCode(session, session.bash('true'), 'unsupported', { type: 'unsupported' })
    await session.close()
  })
})
