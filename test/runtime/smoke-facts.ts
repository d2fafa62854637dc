// Facts about the smoke scenario's record asserted explicitly in every runtime, on top of the
// record being equal to the Node run's.
import { expect } from 'vitest'
import type { SmokeRecord, SmokeStep } from './smoke-scenario.ts'

const hexOf = (bytes: number[] | Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
const utf8Hex = (text: string) => hexOf(new TextEncoder().encode(text))
const BOM_HEX = 'efbbbf'

export function stepNamed(record: SmokeRecord, name: string): SmokeStep {
  const step = record.steps.find((s) => s.step === name)
  if (step === undefined) throw new Error(`no step named ${JSON.stringify(name)} in the record`)
  return step
}

export function expectKeyFacts(record: SmokeRecord): void {
  const step = (name: string) => stepNamed(record, name)
  expect(record.toolNames).toEqual([
    'read',
    'write',
    'edit',
    'patch',
    'ls',
    'search',
    'git',
    'web_fetch',
    'web_search',
    'batch',
    'program',
  ])

  // read: CRLF line endings are not shown in the output; the BOM is not part of line 1.
  expect(step('read single (CRLF)')).toMatchObject({
    exitCode: 0,
    output: '     1\talpha\n     2\tbeta\n     3\tgamma',
    errorKind: null,
    metadata: { file: { line_ending: 'crlf', bom: false } },
  })
  expect(step('read single window (BOM)').output).toContain('     2\tsecond line')
  const batch = step('read files batch')
  expect(batch.exitCode).toBe(0)
  expect(batch.errorKind).toBeNull()
  expect(batch.output).toContain('=== bom.txt ===\n     1\théllo wörld — ✓ 日本語\n')
  expect(batch.output).not.toContain('\ufeff')
  expect(batch.metadata?.batch).toMatchObject({
    status: 'partial_failure',
    successful_files: 2,
    failed_files: 1,
    continuation: [],
  })

  // write: compare-and-append, idempotent re-send, stale offset refused.
  expect(step('write append expected_offset')).toMatchObject({
    exitCode: 0,
    metadata: { applied: true, bytes_written: utf8Hex('two ✓\n').length / 2, next_offset: 12 },
  })
  expect(step('write append re-send (idempotent)')).toMatchObject({
    exitCode: 0,
    metadata: { applied: false, bytes_written: 0, next_offset: 12 },
  })
  expect(step('write append stale offset')).toMatchObject({
    exitCode: 1,
    errorKind: { type: 'version_conflict', path: 'log.txt', expected: 4, actual: 12 },
  })
  expect(record.snapshots['after write']?.['log.txt']).toBe(utf8Hex('one\ntwo ✓\n'))

  // edit: dry run writes nothing, yet reports the same diff as the real edit.
  const dry = step('edit dry_run (CRLF)')
  const real = step('edit (CRLF)')
  expect(dry).toMatchObject({
    exitCode: 0,
    metadata: { replacement_count: 1, dry_run: true, applied: false },
  })
  expect(real).toMatchObject({
    exitCode: 0,
    metadata: { replacement_count: 1, dry_run: false, applied: true },
  })
  expect(dry.metadata?.diff).toBe(real.metadata?.diff)
  expect(dry.metadata?.after).toEqual(real.metadata?.after)
  expect(record.snapshots['after dry_run']?.['notes/crlf.txt']).toBe(
    record.snapshots['initial']?.['notes/crlf.txt'],
  )
  // CRLF kept byte for byte.
  expect(record.snapshots['final']?.['notes/crlf.txt']).toBe(utf8Hex('alpha\r\nBETA\r\ngamma\r\n'))
  // BOM and multi-byte text kept byte for byte.
  expect(step('edit (BOM, multi-byte)').metadata).toMatchObject({ bom: true, line_ending: 'lf' })
  expect(record.snapshots['final']?.['bom.txt']).toBe(
    BOM_HEX + utf8Hex('héllo Welt ✓ — ✓ 日本語\nsecond line\n'),
  )

  // patch
  expect(step('patch')).toMatchObject({
    exitCode: 0,
    metadata: { hunks: 1, lines_added: 2, lines_removed: 1 },
  })
  expect(record.snapshots['final']?.['src/app.ts']).toBe(
    utf8Hex("export const x = 1\nexport const y = 3\nexport const z = 'ζ'\n"),
  )

  // ls
  expect(step('ls root')).toMatchObject({ exitCode: 0, output: 'bom.txt\nlog.txt\nnotes/\nsrc/' })
  expect(step('ls dir')).toMatchObject({ exitCode: 0, output: 'crlf.txt' })

  // search
  expect(step('grep content')).toMatchObject({
    exitCode: 0,
    output:
      "src/app.ts:1:export const x = 1\nsrc/app.ts:2:export const y = 3\nsrc/app.ts:3:export const z = 'ζ'",
  })
  expect(step('grep case-insensitive (CRLF)').output).toBe(
    'notes/crlf.txt:2:BETA\nnotes/crlf.txt:3:gamma',
  )
  expect(step('grep count').output).toBe('bom.txt:2\nlog.txt:1\nsrc/app.ts:3')
  expect(step('grep multi-byte literal').output).toBe('bom.txt')

  // hostile input: typed failures, nothing changed.
  expect(step('bad: ../ escape')).toMatchObject({
    exitCode: 1,
    errorKind: { type: 'permission_denied' },
  })
  const unknown = step('bad: unknown property')
  expect(unknown).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
  expect(String(unknown.errorKind?.message)).toContain('bogus')
  expect(record.snapshots['final']).toEqual(record.snapshots['before bad input'])

  // git (isomorphic-git on the memory workspace): init, add, commit, status, diff, log.
  expect(step('git status (no repository)')).toMatchObject({
    exitCode: 1,
    errorKind: { type: 'not_found', path: '.git' },
  })
  expect(step('git init').output).toBe('Initialized empty Git repository in /.git/')
  expect(step('git add').output).toBe(
    "add 'bom.txt'\nadd 'log.txt'\nadd 'notes/crlf.txt'\nadd 'src/app.ts'",
  )
  expect(step('git commit').output).toBe('[main (root-commit) <abbrev>] Smoke commit')
  expect(step('git status').output).toBe('## main\n M src/app.ts')
  expect(step('git diff').output).toContain('-export const x = 1\n')
  expect(step('git diff').output).toContain('+export const x = 2\n')
  expect(step('git log').output).toBe(
    'commit <oid>\nAuthor: isoagent <isoagent@localhost>\nDate:   <date>\n\n    Smoke commit',
  )
}
