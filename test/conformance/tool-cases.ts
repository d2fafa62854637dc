import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { ToolResult } from '../../adapters/index.ts'
import type { FixtureFactory, SeedFiles, WorkspaceFixture } from './fixture.ts'

const text = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex')
const numbered = (lines: string[], from = 1) =>
  lines.map((l, i) => `${String(from + i).padStart(6)}\t${l}`).join('\n')

function expectFailure(result: ToolResult, type: string) {
  expect(result.exitCode, result.output).toBe(1)
  expect(result.errorKind?.type, result.output).toBe(type)
  expect(result.output.length).toBeGreaterThan(0)
}

/**
 * The workspace conformance suite: the same cases for every adapter. Capability flags decide
 * which cases apply (symlinks, absolute roots).
 */
export function toolConformance(
  name: string,
  factory: FixtureFactory,
  features: { localDisk: boolean },
) {
  describe(`tool conformance: ${name}`, () => {
    let fx: WorkspaceFixture | undefined
    const open = async (files: SeedFiles) => {
      fx = await factory(files)
      return fx
    }
    afterEach(async () => {
      await fx?.cleanup()
      fx = undefined
    })

    /** Run `call` and assert it failed with `type` and left every file byte-identical. */
    async function refusedUnchanged(
      f: WorkspaceFixture,
      tool: string,
      args: unknown,
      type: string,
    ) {
      const before = await f.tree()
      const result = await f.session.tool(tool, args)
      expectFailure(result, type)
      expect(await f.tree()).toEqual(before)
      return result
    }

    describe('registry', () => {
      it('offers the file tools and nothing the workspace cannot serve', async () => {
        const f = await open({})
        const names = f.session.toolNames()
        expect(names).toEqual(expect.arrayContaining(['read', 'write', 'edit', 'patch', 'ls']))
        if (!f.workspace.capabilities.exec) expect(names).not.toContain('bash')
        else expect(names).toContain('bash')
        expect(f.workspace.shell !== undefined).toBe(f.workspace.capabilities.exec)
        if (f.workspace.capabilities.localRoot === undefined)
          expect(names).not.toContain('download')
      })

      it('publishes closed schemas without top-level oneOf', async () => {
        const f = await open({})
        for (const def of f.session.toolDefinitions()) {
          expect(def.parameters.type).toBe('object')
          expect(def.parameters.additionalProperties).toBe(false)
          expect(def.parameters).not.toHaveProperty('oneOf')
          expect(def.parameters).not.toHaveProperty('anyOf')
          expect(def.description.length).toBeGreaterThan(20)
        }
      })

      it('refuses unknown tools with a typed result', async () => {
        const f = await open({})
        expectFailure(await f.session.tool('frobnicate', {}), 'unsupported')
        if (!f.workspace.capabilities.exec)
          expectFailure(await f.session.tool('bash', { command: 'true' }), 'unsupported')
      })
    })

    describe('read', () => {
      it('renders numbered lines with range metadata', async () => {
        const f = await open({ 'a.txt': 'one\ntwo\nthree\n' })
        const r = await f.session.tool('read', { file_path: 'a.txt' })
        expect(r.exitCode).toBe(0)
        expect(r.output).toBe(numbered(['one', 'two', 'three']))
        expect(r.metadata?.range).toEqual({
          offset: 0,
          requested_limit: 2000,
          applied_limit: 2000,
          returned_lines: 3,
          next_offset: null,
          eof: true,
          total_lines: 3,
          limit_clamped: false,
          output_bytes: Buffer.byteLength(r.output),
        })
        expect(r.metadata?.source_anchors).toEqual([{ path: 'a.txt', start_line: 1, end_line: 3 }])
        expect(JSON.parse(r.metadataJson!)).toEqual(r.metadata)
      })

      it('pages with offset/limit and an exact continuation', async () => {
        const lines = Array.from({ length: 25 }, (_, i) => `line ${i}`)
        const f = await open({ 'a.txt': lines.join('\n') })
        const pages: string[] = []
        let offset: number | null = 0
        while (offset !== null) {
          const r = await f.session.tool('read', { file_path: 'a.txt', offset, limit: 10 })
          expect(r.exitCode).toBe(0)
          const range = r.metadata!.range as { next_offset: number | null; total_lines: number }
          expect(range.total_lines).toBe(25)
          if (range.next_offset !== null) {
            expect(
              r.output.endsWith(
                `... (more lines available; continue with offset=${range.next_offset})`,
              ),
            ).toBe(true)
          }
          pages.push(...r.output.split('\n').filter((l) => !l.startsWith('...')))
          offset = range.next_offset
        }
        expect(pages.join('\n')).toBe(numbered(lines))
      })

      it('clamps limit to 2000 and says so', async () => {
        const f = await open({ 'big.txt': 'x\n'.repeat(2500) })
        const r = await f.session.tool('read', { file_path: 'big.txt', limit: 5000 })
        expect(r.metadata?.range).toMatchObject({
          applied_limit: 2000,
          requested_limit: 5000,
          limit_clamped: true,
          next_offset: 2000,
        })
        expect(r.output.split('\n')).toHaveLength(2001)
      })

      it('cuts lines at 2000 characters, even a 50 MB line', async () => {
        const f = await open({ 'long.txt': 'a'.repeat(50 * 1024 * 1024) + '\nshort\n' })
        const r = await f.session.tool('read', { file_path: 'long.txt' })
        expect(r.exitCode).toBe(0)
        const [first, second] = r.output.split('\n')
        expect(first).toBe(`     1\t${'a'.repeat(2000)} … (line truncated at 2000 characters)`)
        expect(second).toBe('     2\tshort')
      })

      it('shows CRLF and BOM files without the CR or BOM, and reports them', async () => {
        const f = await open({ 'w.txt': '\uFEFFfirst\r\nsecond\r\n' })
        const r = await f.session.tool('read', { file_path: 'w.txt' })
        expect(r.output).toBe(numbered(['first', 'second']))
        expect(r.metadata?.file).toMatchObject({ bom: true, line_ending: 'crlf' })
      })

      it('counts a last line without a newline, and an empty file has none', async () => {
        const f = await open({ 'a.txt': 'a\nb', 'empty.txt': '' })
        expect(
          (await f.session.tool('read', { file_path: 'a.txt' })).metadata?.range,
        ).toMatchObject({ total_lines: 2 })
        const empty = await f.session.tool('read', { file_path: 'empty.txt' })
        expect(empty.exitCode).toBe(0)
        expect(empty.output).toBe('')
        expect(empty.metadata?.range).toMatchObject({
          total_lines: 0,
          eof: true,
          returned_lines: 0,
        })
      })

      /**
       * Read `files` to the end by passing each call's `metadata.batch.continuation` unchanged as
       * the next call's `files`; returns the numbered lines shown, by path, and the calls made.
       */
      async function readToEnd(
        f: WorkspaceFixture,
        files: { path: string; offset?: number; limit?: number }[],
        budget: number,
      ) {
        const shown = new Map<string, string[]>()
        const outputs: ToolResult[] = []
        let request: unknown = files
        for (let calls = 0; calls < 500; calls++) {
          const r = await f.session.tool('read', { files: request, max_output_bytes: budget })
          outputs.push(r)
          expect(r.exitCode, r.output).toBe(0)
          expect(r.errorKind).toBeUndefined()
          const batch = r.metadata!.batch as Record<string, unknown>
          expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(budget)
          expect(batch.output_bytes).toBe(Buffer.byteLength(r.output))
          const continuation = batch.continuation as {
            path: string
            offset: number
            limit: number
          }[]
          expect(Array.isArray(continuation)).toBe(true)
          expect(batch.completed_files).toBe(
            (batch.requested_files as number) - continuation.length,
          )
          let path = ''
          for (const line of r.output.split('\n')) {
            const header = /^=== (.*) ===$/.exec(line)
            if (header) path = header[1]!
            else if (!line.startsWith('... (') && !line.startsWith('error: ')) {
              shown.set(path, [...(shown.get(path) ?? []), line])
            }
          }
          if (continuation.length === 0) {
            expect(batch.truncated).toBe(false)
            return { shown, outputs }
          }
          expect(batch.truncated).toBe(true)
          for (const entry of continuation)
            expect(Object.keys(entry)).toEqual(['path', 'offset', 'limit'])
          expect(r.output).toMatch(/continue with files=/)
          request = continuation
        }
        throw new Error('the continuation never ended')
      }

      it('refuses a budget too small to show the first file instead of handing the request back', async () => {
        // A long path that names no file: its header and error line together exceed the budget.
        const deep = Array.from({ length: 10 }, (_, i) => `d${i}${'x'.repeat(98)}`).join('/')
        const f = await open({ 'b.txt': 'two\n' })
        const r = await f.session.tool('read', {
          files: [{ path: `${deep}/missing.txt` }, { path: 'b.txt' }],
          max_output_bytes: 1024,
        })
        expect(r.exitCode).toBe(1)
        expect(r.errorKind).toMatchObject({ type: 'invalid_argument' })
        expect(r.output).toContain('max_output_bytes=1024 is too small')
      })

      it('reads several files under one budget; the continuation fed back returns the rest', async () => {
        const files: SeedFiles = {}
        const lines: Record<string, string[]> = {}
        for (let i = 0; i < 5; i++) {
          lines[`f${i}.txt`] = Array.from(
            { length: 150 + 40 * i },
            (_, k) => `file ${i} line ${k} ${'•'.repeat(k % 9)}`,
          )
          files[`f${i}.txt`] = lines[`f${i}.txt`]!.join('\n') + '\n'
        }
        const f = await open(files)
        const { shown, outputs } = await readToEnd(
          f,
          Object.keys(files).map((path) => ({ path })),
          4096,
        )
        expect(outputs.length).toBeGreaterThan(10)
        expect(
          outputs
            .slice(0, -1)
            .every((r) => (r.metadata!.batch as { status: string }).status === 'partial'),
        ).toBe(true)
        expect((outputs.at(-1)!.metadata!.batch as { status: string }).status).toBe('complete')
        expect([...shown.keys()]).toEqual(Object.keys(files))
        // Every line exactly once, in order, under its own file's header.
        for (const [path, want] of Object.entries(lines)) {
          expect(shown.get(path)!.join('\n')).toBe(numbered(want))
        }
        expect(outputs[0]!.output).toContain(
          `continue with files=${JSON.stringify((outputs[0]!.metadata!.batch as { continuation: unknown }).continuation)}`,
        )
      })

      it('continues within each file window, past a failed file and a line longer than the budget', async () => {
        const long = 'é'.repeat(1500)
        const body = Array.from({ length: 300 }, (_, k) => `row ${k}`)
        const f = await open({
          'a.txt': body.join('\n') + '\n',
          'long.txt': `first\n${long}\nlast\n`,
          'b.txt': body.join('\n'),
        })
        const { shown, outputs } = await readToEnd(
          f,
          [
            { path: 'a.txt', offset: 20, limit: 200 },
            { path: 'missing.txt' },
            { path: 'long.txt' },
            { path: 'b.txt', offset: 250 },
          ],
          1024,
        )
        expect(shown.get('a.txt')!.join('\n')).toBe(numbered(body.slice(20, 220), 21))
        expect(shown.get('b.txt')!.join('\n')).toBe(numbered(body.slice(250), 251))
        const [first, cut, last] = shown.get('long.txt')!
        expect([first, last]).toEqual([numbered(['first']), numbered(['last'], 3)])
        expect(cut).toMatch(/^ {5}2\té+ … \(line cut to fit max_output_bytes=1024\)$/)
        expect(shown.has('missing.txt')).toBe(false)
        const failedOnce = outputs.filter((r) =>
          r.output.includes('error: file not found: missing.txt'),
        )
        expect(failedOnce).toHaveLength(1)
        expect((failedOnce[0]!.metadata!.batch as { status: string }).status).toBe(
          'partial_failure',
        )
      })

      it('succeeds when some files fail, and says which failed', async () => {
        const f = await open({ 'a.txt': 'a\n', 'c.txt': 'c\n' })
        const r = await f.session.tool('read', {
          files: [{ path: 'a.txt' }, { path: 'missing.txt' }, { path: 'c.txt' }],
        })
        expect(r.exitCode).toBe(0)
        expect(r.errorKind).toBeUndefined()
        expect(r.output).toBe(
          [
            '=== a.txt ===',
            numbered(['a']),
            '=== missing.txt ===',
            'error: file not found: missing.txt',
            '=== c.txt ===',
            numbered(['c']),
          ].join('\n'),
        )
        expect(r.metadata?.batch).toMatchObject({
          status: 'partial_failure',
          requested_files: 3,
          successful_files: 2,
          failed_files: 1,
          completed_files: 3,
          truncated: false,
          continuation: [],
        })
        expect((r.metadata?.files as unknown[])[1]).toEqual({
          path: 'missing.txt',
          status: 'failed',
          error: { code: 'not_found', message: 'file not found: missing.txt' },
        })
      })

      it('fails only when every file failed', async () => {
        const f = await open({ 'dir/x.txt': 'x\n' })
        const one = await f.session.tool('read', { files: [{ path: 'missing.txt' }] })
        expect(one.errorKind).toEqual({ type: 'not_found', path: 'missing.txt' })
        expect(one.output).toBe('=== missing.txt ===\nerror: file not found: missing.txt')
        expect(one.metadata?.batch).toMatchObject({
          status: 'partial_failure',
          successful_files: 0,
          failed_files: 1,
          continuation: [],
        })
        const mixed = await f.session.tool('read', {
          files: [{ path: 'missing.txt' }, { path: 'dir' }],
        })
        expectFailure(mixed, 'partial_failure')
        expect(mixed.errorKind).toEqual({ type: 'partial_failure', failed: 2, total: 2 })
        expect(mixed.output).toContain('error: dir is a directory')
      })

      it('refuses bad arguments before reading anything', async () => {
        const f = await open({ 'a.txt': 'a\n' })
        const cases: unknown[] = [
          { file_path: 42 },
          { file_path: 'a.txt', bogus: true },
          { file_path: 'a.txt', files: [{ path: 'a.txt' }] },
          {},
          { files: Array.from({ length: 33 }, (_, i) => ({ path: `f${i}` })) },
          { files: [] },
          { files: [{ path: 'a.txt' }, { path: './a.txt' }] },
          { file_path: 'a.txt', limit: 0 },
          { file_path: 'a.txt', offset: -1 },
          { file_path: 'a.txt', offset: 1.5 },
          { file_path: 'a.txt', offset: 5 },
          { files: [{ path: 'a.txt' }], max_output_bytes: 100 },
          { file_path: 'a.txt', max_output_bytes: 4096 },
          null,
          'a.txt',
        ]
        for (const args of cases) {
          const r = await f.session.tool('read', args)
          expectFailure(r, 'invalid_argument')
        }
      })

      it('refuses directories, missing files, binary files and invalid UTF-8', async () => {
        const f = await open({
          'dir/x.txt': 'x',
          'bin.dat': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]),
          'latin1.txt': new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]),
        })
        expectFailure(await f.session.tool('read', { file_path: 'dir' }), 'invalid_argument')
        expectFailure(await f.session.tool('read', { file_path: 'nope.txt' }), 'not_found')
        const bin = await f.session.tool('read', { file_path: 'bin.dat' })
        expectFailure(bin, 'unsupported')
        expect(bin.output).toContain('binary')
        const latin = await f.session.tool('read', { file_path: 'latin1.txt' })
        expectFailure(latin, 'invalid_argument')
        expect(latin.output).toContain('UTF-8')
      })
    })

    describe('write', () => {
      it('creates files and parent directories, with hashes of what landed', async () => {
        const f = await open({})
        const r = await f.session.tool('write', {
          file_path: 'new/deep/file.txt',
          content: 'héllo\r\n',
        })
        expect(r.exitCode).toBe(0)
        expect(await f.bytes('new/deep/file.txt')).toEqual(new TextEncoder().encode('héllo\r\n'))
        expect(r.metadata).toMatchObject({
          file_path: 'new/deep/file.txt',
          created: true,
          before: null,
        })
        expect(r.metadata?.after).toMatchObject({ bytes: 8, sha256: sha256('héllo\r\n') })
      })

      it('overwrites exactly, reporting before and after', async () => {
        const f = await open({ 'a.txt': 'old\n' })
        const r = await f.session.tool('write', { file_path: 'a.txt', content: 'new\n' })
        expect(r.metadata).toMatchObject({
          created: false,
          before: { bytes: 4, sha256: sha256('old\n'), preview: 'old\n' },
        })
        expect(text(await f.bytes('a.txt'))).toBe('new\n')
      })

      it('appends with compare-and-append and is idempotent on re-send', async () => {
        const f = await open({ 'log.txt': 'a\n' })
        const first = await f.session.tool('write', {
          file_path: 'log.txt',
          content: 'é\n',
          mode: 'append',
          expected_offset: 2,
        })
        expect(first.exitCode).toBe(0)
        expect(first.metadata).toMatchObject({ applied: true, next_offset: 5 })
        const again = await f.session.tool('write', {
          file_path: 'log.txt',
          content: 'é\n',
          mode: 'append',
          expected_offset: 2,
        })
        expect(again.exitCode).toBe(0)
        expect(again.metadata).toMatchObject({ applied: false, bytes_written: 0, next_offset: 5 })
        expect(text(await f.bytes('log.txt'))).toBe('a\né\n')
        const stale = await refusedUnchanged(
          f,
          'write',
          { file_path: 'log.txt', content: 'x', mode: 'append', expected_offset: 2 },
          'version_conflict',
        )
        expect(stale.errorKind).toEqual({
          type: 'version_conflict',
          path: 'log.txt',
          expected: 2,
          actual: 5,
        })
        await refusedUnchanged(
          f,
          'write',
          { file_path: 'log.txt', content: 'x', mode: 'append', expected_offset: 99 },
          'version_conflict',
        )
      })

      it('appends to a missing file only at offset 0', async () => {
        const f = await open({})
        await refusedUnchanged(
          f,
          'write',
          { file_path: 'n.txt', content: 'x', mode: 'append', expected_offset: 3 },
          'version_conflict',
        )
        const ok = await f.session.tool('write', {
          file_path: 'n.txt',
          content: 'x',
          mode: 'append',
          expected_offset: 0,
        })
        expect(ok.metadata).toMatchObject({ created: true })
        expect(text(await f.bytes('n.txt'))).toBe('x')
      })

      it('refuses bad input and leaves everything unchanged', async () => {
        const f = await open({
          'a.txt': 'a\n',
          'dir/b.txt': 'b',
          'bin.dat': new Uint8Array([1, 0, 2]),
        })
        await refusedUnchanged(f, 'write', { file_path: 'a.txt' }, 'invalid_argument')
        await refusedUnchanged(f, 'write', { file_path: 'a.txt', content: 7 }, 'invalid_argument')
        await refusedUnchanged(
          f,
          'write',
          { file_path: 'a.txt', content: 'x', mode: 'insert' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'write',
          { file_path: 'a.txt', content: 'x', expected_offset: 2 },
          'invalid_argument',
        )
        await refusedUnchanged(f, 'write', { file_path: 'dir', content: 'x' }, 'invalid_argument')
        await refusedUnchanged(
          f,
          'write',
          { file_path: 'a.txt/child', content: 'x' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'write',
          { file_path: 'bin.dat', content: 'x', mode: 'append' },
          'unsupported',
        )
      })
    })

    describe('edit', () => {
      it('replaces a unique match with diff metadata and hashes', async () => {
        const f = await open({ 'a.ts': 'const a = 1\nconst b = 2\n' })
        const r = await f.session.tool('edit', {
          file_path: 'a.ts',
          old_string: 'b = 2',
          new_string: 'b = 3',
        })
        expect(r.exitCode).toBe(0)
        expect(text(await f.bytes('a.ts'))).toBe('const a = 1\nconst b = 3\n')
        expect(r.metadata).toMatchObject({
          replacement_count: 1,
          replacements: 1,
          dry_run: false,
          applied: true,
          first_line: 2,
          diff_truncated: false,
          before: { sha256: sha256('const a = 1\nconst b = 2\n'), bytes: 24 },
          after: { sha256: sha256('const a = 1\nconst b = 3\n'), bytes: 24 },
        })
        expect(r.metadata?.diff).toContain('-const b = 2\n+const b = 3')
      })

      it('dry_run returns the same metadata and writes nothing', async () => {
        const f = await open({ 'a.ts': 'x = 1\n' })
        const dry = await f.session.tool('edit', {
          file_path: 'a.ts',
          old_string: '1',
          new_string: '2',
          dry_run: true,
        })
        expect(text(await f.bytes('a.ts'))).toBe('x = 1\n')
        const real = await f.session.tool('edit', {
          file_path: 'a.ts',
          old_string: '1',
          new_string: '2',
        })
        // Same metadata but for the flags and the evidence of the (different) output text.
        const { dry_run: _d, applied: _a, a3s_tool_result_evidence: _e, ...dryRest } = dry.metadata!
        const {
          dry_run: _r,
          applied: _b,
          a3s_tool_result_evidence: _f,
          ...realRest
        } = real.metadata!
        expect(dryRest).toEqual(realRest)
        expect(dry.metadata).toMatchObject({
          replacement_count: 1,
          replacements: 1,
          dry_run: true,
          applied: false,
        })
      })

      it('fails on absent or ambiguous matches, and on count mismatches, writing nothing', async () => {
        const f = await open({ 'a.txt': 'x\nx\nx\n' })
        const absent = await refusedUnchanged(
          f,
          'edit',
          { file_path: 'a.txt', old_string: 'y', new_string: 'z' },
          'invalid_argument',
        )
        expect(absent.output).toContain('not found')
        const ambiguous = await refusedUnchanged(
          f,
          'edit',
          { file_path: 'a.txt', old_string: 'x', new_string: 'z' },
          'invalid_argument',
        )
        expect(ambiguous.output).toContain('3 times')
        await refusedUnchanged(
          f,
          'edit',
          { file_path: 'a.txt', old_string: 'x', new_string: 'z', expected_replacements: 2 },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'edit',
          {
            file_path: 'a.txt',
            old_string: 'x',
            new_string: 'z',
            replace_all: true,
            max_replacements: 2,
          },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'edit',
          { file_path: 'a.txt', old_string: 'x', new_string: 'x' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'edit',
          { file_path: 'a.txt', old_string: '', new_string: 'z' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'edit',
          { file_path: 'missing.txt', old_string: 'x', new_string: 'z' },
          'not_found',
        )
        const all = await f.session.tool('edit', {
          file_path: 'a.txt',
          old_string: 'x',
          new_string: 'z',
          expected_replacements: 3,
        })
        expect(all.metadata).toMatchObject({ replacement_count: 3, replacements: 3 })
        expect(text(await f.bytes('a.txt'))).toBe('z\nz\nz\n')
        await f.session.tool('edit', {
          file_path: 'a.txt',
          old_string: 'z',
          new_string: 'w',
          replace_all: true,
        })
        expect(text(await f.bytes('a.txt'))).toBe('w\nw\nw\n')
      })

      it('keeps a BOM and CRLF line endings byte for byte', async () => {
        const f = await open({ 'w.txt': '\uFEFFalpha\r\nbeta\r\ngamma\r\n' })
        const r = await f.session.tool('edit', {
          file_path: 'w.txt',
          old_string: 'alpha\nbeta',
          new_string: 'ALPHA\nBETA\nextra',
        })
        expect(r.exitCode).toBe(0)
        expect(text(await f.bytes('w.txt'))).toBe('\uFEFFALPHA\r\nBETA\r\nextra\r\ngamma\r\n')
        expect(r.metadata).toMatchObject({ bom: true, line_ending: 'crlf' })
      })

      it('refuses binary and invalid UTF-8 files', async () => {
        const f = await open({
          'bin.dat': new Uint8Array([0x61, 0, 0x62]),
          'bad.txt': new Uint8Array([0x61, 0xff, 0x62]),
        })
        await refusedUnchanged(
          f,
          'edit',
          { file_path: 'bin.dat', old_string: 'a', new_string: 'c' },
          'unsupported',
        )
        await refusedUnchanged(
          f,
          'edit',
          { file_path: 'bad.txt', old_string: 'a', new_string: 'c' },
          'invalid_argument',
        )
      })
    })

    describe('patch', () => {
      const base = 'one\ntwo\nthree\nfour\nfive\n'

      it('applies a strict unified diff', async () => {
        const f = await open({ 'a.txt': base })
        const diff = '--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n'
        const r = await f.session.tool('patch', { file_path: 'a.txt', diff })
        expect(r.exitCode, r.output).toBe(0)
        expect(text(await f.bytes('a.txt'))).toBe('one\ntwo\nTHREE\nfour\nfive\n')
        expect(r.metadata).toMatchObject({
          hunks: 1,
          lines_added: 1,
          lines_removed: 1,
          after: { sha256: sha256('one\ntwo\nTHREE\nfour\nfive\n') },
        })
      })

      it('is all or nothing: one bad hunk changes nothing', async () => {
        const f = await open({ 'a.txt': base })
        const diff = '@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n@@ -4,2 +4,2 @@\n four\n-FIVE\n+5\n'
        const r = await refusedUnchanged(
          f,
          'patch',
          { file_path: 'a.txt', diff },
          'invalid_argument',
        )
        expect(r.output).toContain('hunk 2')
      })

      it('refuses wrong context, lying hunk headers, and garbage', async () => {
        const f = await open({ 'a.txt': base })
        await refusedUnchanged(
          f,
          'patch',
          { file_path: 'a.txt', diff: '@@ -1,2 +1,2 @@\n one\n-TWO\n+2\n' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'patch',
          { file_path: 'a.txt', diff: '@@ -1,5 +1,2 @@\n one\n-two\n+2\n' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'patch',
          { file_path: 'a.txt', diff: '@@ -1,2 +1,2 @@\n one\n-two\n+2\n+extra\n' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'patch',
          { file_path: 'a.txt', diff: 'this is not a diff' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'patch',
          { file_path: 'a.txt', diff: '@@ -1,1 +1,1 @@\n-one\r\n+ONE\n' },
          'invalid_argument',
        )
        await refusedUnchanged(
          f,
          'patch',
          { file_path: 'missing.txt', diff: '@@ -1,1 +1,1 @@\n-one\n+ONE\n' },
          'not_found',
        )
      })

      it('refuses files with mixed line endings', async () => {
        const f = await open({ 'm.txt': 'one\r\ntwo\nthree\n' })
        await refusedUnchanged(
          f,
          'patch',
          { file_path: 'm.txt', diff: '@@ -3,1 +3,1 @@\n-three\n+THREE\n' },
          'invalid_argument',
        )
      })

      it('patches a CRLF + BOM file with an LF diff and keeps CRLF', async () => {
        const f = await open({ 'w.txt': '\uFEFFone\r\ntwo\r\n' })
        const r = await f.session.tool('patch', {
          file_path: 'w.txt',
          diff: '@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n',
        })
        expect(r.exitCode, r.output).toBe(0)
        expect(text(await f.bytes('w.txt'))).toBe('\uFEFFone\r\nTWO\r\n')
      })

      it('creates a file from a -0,0 diff', async () => {
        const f = await open({})
        const r = await f.session.tool('patch', {
          file_path: 'src/new.txt',
          diff: '--- /dev/null\n+++ b/src/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n',
        })
        expect(r.exitCode, r.output).toBe(0)
        expect(r.metadata).toMatchObject({ created: true })
        expect(text(await f.bytes('src/new.txt'))).toBe('hello\nworld\n')
      })
    })

    describe('ls', () => {
      it('lists sorted with directories marked', async () => {
        const f = await open({ 'b.txt': '', 'a/x.txt': '', 'C.md': '', '.hidden': '' })
        const r = await f.session.tool('ls', {})
        expect(r.exitCode).toBe(0)
        expect(r.output).toBe(['.hidden', 'C.md', 'a/', 'b.txt'].join('\n'))
        expect((await f.session.ls('a')).output).toBe('x.txt')
      })

      it('pages with a cursor that joins to the full listing', async () => {
        const files: SeedFiles = {}
        for (let i = 0; i < 57; i++) files[`d/f${String(i).padStart(3, '0')}.txt`] = ''
        const f = await open(files)
        const names: string[] = []
        let cursor: string | undefined
        let pages = 0
        do {
          const r = await f.session.tool('ls', {
            path: 'd',
            limit: 10,
            ...(cursor ? { cursor } : {}),
          })
          expect(r.exitCode, r.output).toBe(0)
          names.push(...(r.metadata!.entries as { name: string }[]).map((e) => e.name))
          cursor = (r.metadata!.next_cursor as string | null) ?? undefined
          pages++
        } while (cursor !== undefined)
        expect(pages).toBe(6)
        expect(names).toEqual(
          Object.keys(files)
            .map((p) => p.slice(2))
            .sort(),
        )
      })

      it('refuses forged cursors, cursors of another directory, files and missing paths', async () => {
        const f = await open({ 'd/a': '', 'd/b': '', 'e/c': '', 'file.txt': '' })
        const first = await f.session.tool('ls', { path: 'd', limit: 1 })
        const cursor = first.metadata!.next_cursor as string
        expectFailure(await f.session.tool('ls', { path: 'e', cursor }), 'invalid_argument')
        expectFailure(
          await f.session.tool('ls', { path: 'd', cursor: 'not-a-cursor' }),
          'invalid_argument',
        )
        expectFailure(
          await f.session.tool('ls', { path: 'd', cursor: cursor.slice(0, -3) }),
          'invalid_argument',
        )
        expectFailure(await f.session.tool('ls', { path: 'd', limit: 0 }), 'invalid_argument')
        expectFailure(await f.session.tool('ls', { path: 'd', limit: 1001 }), 'invalid_argument')
        expectFailure(await f.session.tool('ls', { path: 'file.txt' }), 'invalid_argument')
        expectFailure(await f.session.tool('ls', { path: 'nope' }), 'not_found')
      })
    })

    describe('containment', () => {
      const escapes = ['../x', 'dir/../../x', '../../../../etc/passwd', 'a/../../etc/passwd']
      const malformed = [
        'a\u0000b',
        'a\nb',
        '%2e%2e/x',
        'dir/%2E%2e/%2e%2e/x',
        '..\\x',
        'dir\\..\\..\\x',
        'C:/x',
        'x'.repeat(300),
      ]

      const calls = (path: string): [string, Record<string, unknown>][] => [
        ['read', { file_path: path }],
        ['read', { files: [{ path }] }],
        ['write', { file_path: path, content: 'pwned' }],
        ['write', { file_path: path, content: 'pwned', mode: 'append' }],
        ['edit', { file_path: path, old_string: 'a', new_string: 'b' }],
        ['patch', { file_path: path, diff: '@@ -0,0 +1,1 @@\n+pwned\n' }],
        ['ls', { path }],
      ]

      it('refuses .. escapes from every tool, changing nothing', async () => {
        const f = await open({ 'dir/a.txt': 'a\n' })
        for (const path of escapes) {
          for (const [tool, args] of calls(path)) {
            const before = await f.tree()
            const r = await f.session.tool(tool, args)
            expect(r.exitCode, `${tool} ${path}`).toBe(1)
            expect(['permission_denied', 'partial_failure'], `${tool} ${path}`).toContain(
              r.errorKind?.type,
            )
            expect(await f.tree()).toEqual(before)
          }
        }
      })

      it('refuses NUL, control characters, encoded dots, backslashes and overlong segments', async () => {
        const f = await open({ 'dir/a.txt': 'a\n' })
        for (const path of malformed) {
          for (const [tool, args] of calls(path)) {
            const before = await f.tree()
            const r = await f.session.tool(tool, args)
            expect(r.exitCode, `${tool} ${JSON.stringify(path)}`).toBe(1)
            expect(['invalid_argument', 'partial_failure'], `${tool} ${path}`).toContain(
              r.errorKind?.type,
            )
            expect(await f.tree()).toEqual(before)
          }
        }
      })

      it('normalises harmless forms inside the root', async () => {
        const f = await open({ 'dir/a.txt': 'a\n' })
        for (const path of [
          'dir/a.txt',
          './dir/a.txt',
          'dir//a.txt',
          'dir/./a.txt',
          'x/../dir/a.txt',
          '/dir/a.txt',
        ]) {
          const r = await f.session.tool('read', {
            file_path: path.startsWith('/')
              ? `${f.workspace.capabilities.localRoot ?? ''}${path}`
              : path,
          })
          expect(r.exitCode, path).toBe(0)
          expect(r.output).toBe(numbered(['a']))
        }
      })

      // Cases below need a real directory tree with an outside and symlinks.
      if (!features.localDisk) return

      it('refuses absolute paths outside a local root', async () => {
        const f = await open({ 'a.txt': 'a\n' })
        if (f.outsideFile === undefined) throw new Error('local fixture must expose outsideFile')
        for (const [tool, args] of calls(f.outsideFile)) {
          const before = await f.tree()
          const r = await f.session.tool(tool, args)
          expect(r.exitCode, tool).toBe(1)
          expect(await f.tree()).toEqual(before)
        }
      })

      it('follows symlinks inside the root and refuses those that lead outside', async () => {
        const f = await open({ 'real/target.txt': 'inside\n' })
        if (f.symlink === undefined || f.outsideFile === undefined)
          throw new Error('local fixture must make symlinks')
        f.symlink('link-in.txt', 'real/target.txt')
        f.symlink('dir-in', 'real')
        f.symlink('link-out.txt', f.outsideFile)
        f.symlink('dir-out', '/etc')
        f.symlink('dangling-out.txt', f.outsideFile + '.new')
        expect((await f.session.tool('read', { file_path: 'link-in.txt' })).output).toBe(
          numbered(['inside']),
        )
        expect((await f.session.tool('read', { file_path: 'dir-in/target.txt' })).output).toBe(
          numbered(['inside']),
        )
        for (const path of [
          'link-out.txt',
          'dir-out/passwd',
          'dangling-out.txt',
          'dir-out/new.txt',
        ]) {
          for (const [tool, args] of calls(path)) {
            const before = await f.tree()
            const r = await f.session.tool(tool, args)
            expect(r.exitCode, `${tool} ${path}`).toBe(1)
            expect(
              ['permission_denied', 'partial_failure', 'not_found', 'invalid_argument'],
              `${tool} ${path}: ${r.output}`,
            ).toContain(r.errorKind?.type)
            expect(r.output).not.toContain('root:')
            expect(await f.tree()).toEqual(before)
          }
        }
        const edit = await f.session.tool('edit', {
          file_path: 'link-in.txt',
          old_string: 'inside',
          new_string: 'edited',
        })
        expect(edit.exitCode, edit.output).toBe(0)
        expect(text(await f.bytes('real/target.txt'))).toBe('edited\n')
      })
    })

    describe('skills', () => {
      const skill = (fm: string, body: string) => `---\n${fm}\n---\n${body}`
      const SKILLS: SeedFiles = {
        '.agents/skills/release-notes/SKILL.md': skill(
          'name: release-notes\ndescription: Draft release notes from the git log.\ntags: [git]\nallowed-tools: Read, Bash(git log:*)',
          'Read CHANGELOG.md first.\n',
        ),
        '.agents/skills/release-notes/scripts/collect.sh': 'git log --oneline\n',
        '.claude/skills/lint-fix.md': skill(
          'name: lint-fix\ndescription: Fix lint errors.',
          'Run the linter.\n',
        ),
        '.a3s/skills/broken.md': '---\nname: [unclosed\n---\n',
      }

      it('finds the same skills, diagnostics and search answers on every workspace', async () => {
        const f = await open(SKILLS)
        const report = f.session.skills()
        expect(report.skills.map((s) => [s.name, s.source])).toEqual([
          ['lint-fix', { kind: 'workspace', path: '.claude/skills/lint-fix.md' }],
          ['release-notes', { kind: 'workspace', path: '.agents/skills/release-notes/SKILL.md' }],
        ])
        expect(report.diagnostics.map((d) => d.path)).toEqual(['.a3s/skills/broken.md'])
        const found = await f.session.tool('search_skills', { query: 'git release' })
        expect(found.output).toBe(
          'Found 1 matching skill(s). Invoke one with Skill using its skill_name.\n' +
            '- release-notes (instruction): Draft release notes from the git log. Allowed tools: Read, Bash(git log:*).',
        )
        const used = await f.session.tool('Skill', { skill_name: 'release-notes' })
        expect(used.output).toBe(
          '# Skill: release-notes\n\nRead CHANGELOG.md first.\n\nBundled files (read them when the instructions say so):\n- .agents/skills/release-notes/scripts/collect.sh',
        )
      })
    })
  })
}
