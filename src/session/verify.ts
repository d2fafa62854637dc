import { IsoagentError } from '../errors.ts'
import { errorCodeOf } from '../kernel/error-kind.ts'
import { utf8 } from '../text/bytes.ts'
import { utf8SafeTailStart } from '../text/preview.ts'
import type { ToolResult } from '../tool-result.ts'
import { BASH_TIMEOUT_MS } from '../tools/bash/bash.ts'

/** Bytes of each command's output kept in {@link VerifyResult.outputTail}. */
export const VERIFY_OUTPUT_TAIL_BYTES = 4096

/** One check of {@link Session.verifyCommands}: a command run through the governed `bash` path. */
export interface VerifyCommand {
  /** Unique within one call. */
  id: string
  /** What the check is, e.g. `test`, `lint`, `build`, `typecheck`. */
  kind: string
  description?: string
  command: string
  /** A failed required check fails the report (default true). */
  required?: boolean
  /** Deadline of the command in ms (the `bash` tool's `timeout`; default 120000, ≥ 1000). */
  timeoutMs?: number
}

/** How one check went. */
export interface VerifyResult {
  id: string
  kind: string
  required: boolean
  /** The command's exit code; null when it timed out, was killed or never ran. */
  exitCode: number | null
  durationMs: number
  /** The last {@link VERIFY_OUTPUT_TAIL_BYTES} bytes of the `bash` output. */
  outputTail: string
  timedOut: boolean
}

/** Outcome of {@link Session.verifyCommands}. */
export interface VerifyReport {
  subject: string
  /** False when any required check did not exit 0. */
  passed: boolean
  results: VerifyResult[]
}

const COMMAND_KEYS = new Set(['id', 'kind', 'description', 'command', 'required', 'timeoutMs'])

/** Check the input of `verifyCommands`; throws `IsoagentError` `invalid_argument`. */
export function checkVerifyInput(subject: unknown, commands: unknown): VerifyCommand[] {
  const refuse = (why: string) => new IsoagentError('invalid_argument', `verifyCommands: ${why}`)
  if (typeof subject !== 'string' || subject.trim() === '')
    throw refuse('subject must be a non-empty string')
  if (!Array.isArray(commands) || commands.length === 0)
    throw refuse('commands must be a non-empty array')
  if (commands.length > 256) throw refuse('at most 256 commands')
  const ids = new Set<string>()
  return commands.map((c: unknown, i) => {
    if (typeof c !== 'object' || c === null || Array.isArray(c))
      throw refuse(`commands[${i}] must be an object`)
    const record = c as Record<string, unknown>
    for (const key of Object.keys(record))
      if (!COMMAND_KEYS.has(key)) throw refuse(`commands[${i}]: unknown field "${key}"`)
    for (const key of ['id', 'kind', 'command'] as const) {
      if (typeof record[key] !== 'string' || (record[key] as string).trim() === '')
        throw refuse(`commands[${i}].${key} must be a non-empty string`)
    }
    if (record.description !== undefined && typeof record.description !== 'string')
      throw refuse(`commands[${i}].description must be a string`)
    if (record.required !== undefined && typeof record.required !== 'boolean')
      throw refuse(`commands[${i}].required must be a boolean`)
    const t = record.timeoutMs
    if (
      t !== undefined &&
      (typeof t !== 'number' ||
        !Number.isInteger(t) ||
        t < BASH_TIMEOUT_MS.min ||
        t > BASH_TIMEOUT_MS.max)
    )
      throw refuse(
        `commands[${i}].timeoutMs must be an integer in ${BASH_TIMEOUT_MS.min}..${BASH_TIMEOUT_MS.max}`,
      )
    const id = record.id as string
    if (ids.has(id)) throw refuse(`duplicate id "${id}"`)
    ids.add(id)
    return record as unknown as VerifyCommand
  })
}

/** The last {@link VERIFY_OUTPUT_TAIL_BYTES} bytes of `text`, UTF-8 safe. */
export function outputTail(text: string): string {
  if (text.length <= VERIFY_OUTPUT_TAIL_BYTES / 3) return text
  const bytes = utf8(text)
  if (bytes.length <= VERIFY_OUTPUT_TAIL_BYTES) return text
  const start = utf8SafeTailStart(bytes, bytes.length - VERIFY_OUTPUT_TAIL_BYTES)
  return new TextDecoder().decode(bytes.subarray(start))
}

/** The {@link VerifyResult} of one `bash` result. */
export function verifyResult(command: VerifyCommand, result: ToolResult, durationMs: number) {
  const metadata = result.metadata ?? {}
  const exit = metadata.exit_code
  const output = metadata.output as { timed_out?: unknown } | undefined
  const timedOut = output?.timed_out === true || result.errorKind?.type === 'timeout'
  return {
    id: command.id,
    kind: command.kind,
    required: command.required !== false,
    exitCode: typeof exit === 'number' && !timedOut ? exit : null,
    durationMs,
    outputTail: outputTail(result.output),
    timedOut,
  } satisfies VerifyResult
}

/**
 * Throw for a failed `bash` result: an `IsoagentError` whose code follows the result's
 * `errorKind` (`io` for a non-zero exit) and whose `data` holds `errorKind`, `exitCode` and the
 * whole `output`.
 */
export function throwIfBashFailed(result: ToolResult): ToolResult {
  if (result.exitCode === 0) return result
  const code = result.errorKind === undefined ? 'io' : errorCodeOf(result.errorKind)
  throw new IsoagentError(code, result.output, {
    data: {
      errorKind: result.errorKind,
      exitCode: result.metadata?.exit_code ?? null,
      output: result.output,
    },
  })
}
