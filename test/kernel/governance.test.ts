import { afterEach, describe, expect, it } from 'vitest'
import { Agent, IsoagentError, memoryWorkspace } from '../../adapters/index.ts'
import {
  cleanupHarnesses,
  harness,
  recordEvents,
  settle,
  until,
  WORKSPACE_KINDS,
} from './helpers.ts'

afterEach(cleanupHarnesses)

describe.each(WORKSPACE_KINDS)('governance on %s workspace', (kind) => {
  describe('permissions', () => {
    it('denies the model writes under secrets/** while the host writes there', async () => {
      const h = await harness(
        kind,
        { 'secrets/key.txt': 'old\n' },
        { permissions: { deny: ['write(secrets/**)', 'edit(secrets/**)'] } },
      )
      const rec = recordEvents(h.session)
      for (const path of [
        'secrets/key.txt',
        './secrets/../secrets/key.txt',
        'secrets/new/deep.txt',
      ]) {
        const r = await h.session.governedTool('write', { file_path: path, content: 'model\n' })
        expect(r.exitCode).toBe(1)
        expect(r.errorKind).toMatchObject({ type: 'permission_denied', reason: 'denied_by_rule' })
        expect(r.output).toContain('write(secrets/**)')
      }
      expect(await h.file('secrets/key.txt')).toBe('old\n')
      expect(await h.file('secrets/new/deep.txt')).toBeUndefined()
      expect(
        (await h.session.governedTool('write', { file_path: 'public.txt', content: 'ok' }))
          .exitCode,
      ).toBe(0)
      const host = await h.session.tool('write', {
        file_path: 'secrets/key.txt',
        content: 'host\n',
      })
      expect(host.exitCode).toBe(0)
      expect(await h.file('secrets/key.txt')).toBe('host\n')
      await settle()
      expect(rec.events.filter((e) => e.type === 'permission_denied')).toHaveLength(3)
      rec.stop()
    })

    it('applies deny over ask over allow, and the default decision', async () => {
      const h = await harness(
        kind,
        { 'a.txt': 'a\n', 'b.txt': 'b\n' },
        {
          permissions: {
            allow: ['read', 'ls'],
            ask: ['read(b.txt)'],
            deny: ['read(*.txt)'],
            defaultDecision: 'deny',
          },
        },
      )
      expect((await h.session.governedTool('read', { file_path: 'a.txt' })).errorKind?.type).toBe(
        'permission_denied',
      )
      expect((await h.session.governedTool('ls', {})).exitCode).toBe(0)
      expect(
        (
          await h.session.governedTool('edit', {
            file_path: 'a.txt',
            old_string: 'a',
            new_string: 'c',
          })
        ).errorKind?.type,
      ).toBe('permission_denied')
      expect(await h.file('a.txt')).toBe('a\n')
      const many = await h.session.governedTool('read', {
        files: [{ path: 'x.md' }, { path: 'a.txt' }],
      })
      expect(many.errorKind?.type).toBe('permission_denied')
    })

    it('decides every path of a files batch: an allow rule for one does not let the others through', async () => {
      const h = await harness(
        kind,
        { 'src/a.ts': 'a\n', '.env': 'SECRET=1\n', 'docs/b.md': 'b\n' },
        { permissions: { allow: ['read(src/**)', 'read(docs/**)'], defaultDecision: 'deny' } },
      )
      const mixed = await h.session.governedTool('read', {
        files: [{ path: 'src/a.ts' }, { path: '.env' }],
      })
      expect(mixed.errorKind?.type).toBe('permission_denied')
      expect(mixed.output).not.toContain('SECRET')
      const allowed = await h.session.governedTool('read', {
        files: [{ path: 'src/a.ts' }, { path: 'docs/b.md' }],
      })
      expect(allowed.exitCode).toBe(0)
      const asked = await harness(
        kind,
        { 'src/a.ts': 'a\n', '.env': 'SECRET=1\n' },
        {
          permissions: { allow: ['read(src/**)'], defaultDecision: 'ask' },
          confirmationTimeoutMs: 50,
        },
      )
      const pending = await asked.session.governedTool('read', {
        files: [{ path: 'src/a.ts' }, { path: '.env' }],
      })
      expect(pending.exitCode).toBe(1)
      expect(pending.output).not.toContain('SECRET')
    })

    it('matches command-style globs across slashes', async () => {
      const h = await harness(
        kind,
        {},
        {
          permissions: { deny: ['custom(git push*)'] },
          tools: [
            {
              name: 'custom',
              description: 'echo a command',
              parameters: {
                type: 'object',
                additionalProperties: false,
                properties: { command: { type: 'string' } },
              },
              primaryArgument: 'command',
              run: (args) => String(args.command),
            },
          ],
        },
      )
      expect(
        (await h.session.governedTool('custom', { command: 'git push origin feature/x' })).errorKind
          ?.type,
      ).toBe('permission_denied')
      expect((await h.session.governedTool('custom', { command: 'git status' })).output).toBe(
        'git status',
      )
    })

    it('refuses rules that do not parse when the session is created', async () => {
      for (const permissions of [
        { deny: ['write('] },
        { deny: ['(x)'] },
        { deny: ['wri te'] },
        { allow: [42] },
        { allow: 'read' },
        { deny: ['write()'] },
        { block: ['read'] },
        { defaultDecision: 'maybe' },
      ]) {
        await expect(
          Agent.create().session(memoryWorkspace(), { permissions } as never),
          JSON.stringify(permissions),
        ).rejects.toMatchObject({
          code: 'invalid_argument',
        })
      }
    })
  })

  describe('confirmation', () => {
    it('asks a human before any edit: a refusal is a failed result, an approval runs it', async () => {
      const h = await harness(kind, { 'a.txt': 'one\n' }, { permissions: { ask: ['edit'] } })
      const rec = recordEvents(h.session)
      const refused = h.session.governedTool('edit', {
        file_path: 'a.txt',
        old_string: 'one',
        new_string: 'two',
      })
      await until(() => h.session.pendingConfirmations().length === 1)
      const [pending] = h.session.pendingConfirmations()
      expect(pending).toMatchObject({
        toolName: 'edit',
        origin: 'agent',
        args: { file_path: 'a.txt' },
      })
      expect(h.session.activeTools().find((a) => a.id === pending!.callId)?.state).toBe(
        'gate_pending',
      )
      h.session.confirmToolUse(pending!.id, false)
      const r = await refused
      expect(r.exitCode).toBe(1)
      expect(r.errorKind).toEqual({
        type: 'permission_denied',
        message: 'refused by the user',
        reason: 'confirmation_refused',
      })
      expect(await h.file('a.txt')).toBe('one\n')
      expect(() => h.session.confirmToolUse(pending!.id, true)).toThrow(/already answered/)
      expect(() => h.session.confirmToolUse('confirm_nope', true)).toThrow(IsoagentError)

      const approved = h.session.governedTool('edit', {
        file_path: 'a.txt',
        old_string: 'one',
        new_string: 'two',
      })
      await until(() => h.session.pendingConfirmations().length === 1)
      h.session.confirmToolUse(h.session.pendingConfirmations()[0]!.id, true)
      expect((await approved).exitCode).toBe(0)
      expect(await h.file('a.txt')).toBe('two\n')
      await settle()
      expect(rec.events.filter((e) => e.type === 'confirmation_required')).toHaveLength(2)
      // Host-direct calls skip confirmation.
      expect((await h.session.editFile('a.txt', 'two', 'three')).exitCode).toBe(0)
      rec.stop()
    })

    it('an ask nobody can be asked about says so, not "refused by the user"', async () => {
      const h = await harness(
        kind,
        { 'a.txt': 'one\n' },
        { permissions: { ask: ['edit(*.txt)'], defaultDecision: 'ask' } },
      )
      const rec = recordEvents(h.session)
      const unasked = async (args: Record<string, unknown>, tool = 'edit') => {
        const call = h.session.governedTool(tool, args)
        await until(() => h.session.pendingConfirmations().length === 1)
        h.session.cannotConfirm(h.session.pendingConfirmations()[0]!.id, 'no one is at the screen')
        return call
      }
      const byRule = await unasked({ file_path: 'a.txt', old_string: 'one', new_string: 'two' })
      expect(byRule.exitCode).toBe(1)
      expect(byRule.errorKind).toMatchObject({
        type: 'permission_denied',
        reason: 'confirmation_unavailable',
      })
      expect(byRule.output).not.toContain('refused by the user')
      expect(byRule.output).toContain('cannot be asked (no one is at the screen)')
      expect(byRule.output).toContain('nobody refused it')
      expect(byRule.output).toContain('the ask rule "edit(*.txt)"')
      expect(await h.file('a.txt')).toBe('one\n')

      const byDefault = await unasked({ path: '.' }, 'ls')
      expect(byDefault.errorKind).toMatchObject({ reason: 'confirmation_unavailable' })
      expect(byDefault.output).toContain('default permission decision is ask')
      expect(byDefault.output).toContain('add an allow rule')

      await settle()
      const denied = rec.events.filter((e) => e.type === 'permission_denied')
      expect(denied).toHaveLength(2)
      expect(denied[0]).toMatchObject({
        rule: 'edit(*.txt)',
        reason: expect.stringContaining('cannot be asked'),
      })
      const ends = rec.events.filter((e) => e.type === 'tool_end')
      expect(ends.map((e) => e.type === 'tool_end' && e.state)).toEqual(['rejected', 'rejected'])
      expect(() => h.session.cannotConfirm('confirm_nope', 'x')).toThrow(IsoagentError)
      rec.stop()
    })

    it('times out, or is cancelled by the caller or by close, without hanging', async () => {
      const h = await harness(
        kind,
        { 'a.txt': 'one\n' },
        { permissions: { ask: ['edit'] }, confirmationTimeoutMs: 50 },
      )
      const timedOut = await h.session.governedTool('edit', {
        file_path: 'a.txt',
        old_string: 'one',
        new_string: 'two',
      })
      expect(timedOut.errorKind).toMatchObject({
        type: 'permission_denied',
        message: expect.stringContaining('timed out'),
        reason: 'confirmation_timed_out',
      })

      const controller = new AbortController()
      const aborted = h.session.governedTool(
        'write',
        { file_path: 'x', content: '' },
        { signal: controller.signal },
      )
      expect((await aborted).exitCode).toBe(0)
      const waiting = h.session.governedTool(
        'edit',
        { file_path: 'a.txt', old_string: 'one', new_string: 'two' },
        { signal: controller.signal },
      )
      await until(() => h.session.pendingConfirmations().length === 1)
      controller.abort()
      expect((await waiting).errorKind).toEqual({ type: 'cancelled', op: 'edit' })
      expect(h.session.pendingConfirmations()).toEqual([])

      const h2 = await harness(kind, { 'a.txt': 'one\n' }, { permissions: { ask: ['edit'] } })
      const pending = h2.session.governedTool('edit', {
        file_path: 'a.txt',
        old_string: 'one',
        new_string: 'two',
      })
      await until(() => h2.session.pendingConfirmations().length === 1)
      await h2.session.close()
      expect((await pending).errorKind?.type).toBe('cancelled')
      expect(await h2.file('a.txt')).toBe('one\n')
    })
  })

  describe('hooks', () => {
    it('lets a preToolUse hook block, before any side effect, for every origin', async () => {
      const seen: string[] = []
      const h = await harness(
        kind,
        { 'a.txt': 'a\n' },
        {
          hooks: {
            preToolUse(call) {
              seen.push(`${call.origin}:${call.toolName}`)
              if (call.toolName === 'write')
                return { block: 'writes are frozen', retryable: true, retry_after_ms: 500 }
            },
          },
        },
      )
      for (const call of [
        () => h.session.tool('write', { file_path: 'a.txt', content: 'x' }),
        () => h.session.governedTool('write', { file_path: 'a.txt', content: 'x' }),
      ]) {
        const r = await call()
        expect(r.errorKind).toEqual({
          type: 'hook_denied',
          reason: 'writes are frozen',
          retryable: true,
          retry_after_ms: 500,
        })
      }
      expect(await h.file('a.txt')).toBe('a\n')
      expect((await h.session.tool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
      expect(seen).toEqual(['host_direct:write', 'agent:write', 'host_direct:read'])
    })

    it('fails closed when a hook throws or hangs, and reports it', async () => {
      const h = await harness(
        kind,
        { 'a.txt': 'a\n' },
        {
          hookTimeoutMs: 50,
          hooks: {
            preToolUse(call) {
              if (call.toolName === 'write') throw new Error('policy service down')
              if (call.toolName === 'edit') return new Promise(() => {})
            },
          },
        },
      )
      const rec = recordEvents(h.session)
      const thrown = await h.session.tool('write', { file_path: 'a.txt', content: 'x' })
      expect(thrown.errorKind).toMatchObject({
        type: 'hook_denied',
        retryable: false,
        reason: expect.stringContaining('policy service down'),
      })
      const hung = await h.session.tool('edit', {
        file_path: 'a.txt',
        old_string: 'a',
        new_string: 'b',
      })
      expect(hung.errorKind).toMatchObject({
        type: 'hook_denied',
        reason: expect.stringContaining('within 50 ms'),
      })
      expect(await h.file('a.txt')).toBe('a\n')
      await settle()
      expect(rec.events.filter((e) => e.type === 'hook_error')).toHaveLength(2)
      rec.stop()
    })

    it('runs postToolUse with the result; its failure is reported, the result kept', async () => {
      const results: unknown[] = []
      const h = await harness(
        kind,
        { 'a.txt': 'a\n' },
        {
          hooks: {
            postToolUse(call, result) {
              results.push({ tool: call.toolName, exitCode: result.exitCode })
              if (call.toolName === 'ls') throw new Error('audit log full')
            },
          },
        },
      )
      expect((await h.session.tool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
      const ls = await h.session.tool('ls', {})
      expect(ls.exitCode).toBe(0)
      expect(ls.metadata?.post_hook_error).toBe('audit log full')
      expect(results).toEqual([
        { tool: 'read', exitCode: 0 },
        { tool: 'ls', exitCode: 0 },
      ])
    })

    it('hands hooks a copy: changing the args in a hook changes nothing', async () => {
      const h = await harness(
        kind,
        { 'a.txt': 'a\n' },
        {
          hooks: {
            preToolUse(call) {
              ;(call.args as { file_path: string }).file_path = '../escape'
            },
          },
        },
      )
      expect((await h.session.tool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
    })
  })

  describe('budget', () => {
    it('refuses calls past maxToolCalls before any side effect, host calls included', async () => {
      const h = await harness(kind, { 'a.txt': 'a\n' }, { budget: { maxToolCalls: 2 } })
      const rec = recordEvents(h.session)
      expect((await h.session.tool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
      expect((await h.session.governedTool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
      const third = await h.session.tool('write', { file_path: 'a.txt', content: 'x' })
      expect(third.errorKind).toMatchObject({
        type: 'permission_denied',
        message: expect.stringContaining('maxToolCalls=2'),
        reason: 'budget_exhausted',
      })
      expect(await h.file('a.txt')).toBe('a\n')
      await settle()
      expect(rec.events.some((e) => e.type === 'budget_exhausted')).toBe(true)
      rec.stop()
    })

    it('stops a batch midway when the budget runs out, listing the failed children', async () => {
      const h = await harness(kind, { 'a.txt': 'a\n' }, { budget: { maxToolCalls: 3 } })
      const r = await h.session.tool('batch', {
        invocations: [0, 1, 2, 3].map((i) => ({
          id: `w${i}`,
          tool: 'write',
          args: { file_path: `out/${i}.txt`, content: `${i}` },
        })),
      })
      expect(r.exitCode).toBe(1)
      expect(r.errorKind).toEqual({ type: 'partial_failure', failed: 2, total: 4 })
      expect(r.metadata).toMatchObject({ failed_indices: [2, 3], succeeded: 2, parallel: false })
      expect(await h.file('out/1.txt')).toBe('1')
      expect(await h.file('out/2.txt')).toBeUndefined()
    })

    it('counts output bytes against maxOutputBytes', async () => {
      const h = await harness(
        kind,
        { 'a.txt': 'x'.repeat(300) + '\n' },
        { budget: { maxOutputBytes: 500 } },
      )
      expect((await h.session.tool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
      expect((await h.session.tool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
      expect((await h.session.tool('read', { file_path: 'a.txt' })).errorKind?.type).toBe(
        'permission_denied',
      )
    })

    it('refuses malformed budgets at session creation', async () => {
      for (const budget of [{ maxToolCalls: -1 }, { maxToolCalls: 1.5 }, { maxCalls: 3 }]) {
        await expect(
          Agent.create().session(memoryWorkspace(), { budget } as never),
        ).rejects.toMatchObject({ code: 'invalid_argument' })
      }
    })
  })
})
