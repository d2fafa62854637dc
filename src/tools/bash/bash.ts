import { IsoagentError } from '../../errors.ts'
import { HeadTailCapture } from '../../text/head-tail-capture.ts'
import { toolFailure, toolSuccess, type ToolErrorKind } from '../../tool-result.ts'
import type { TreeSnapshot } from '../../workspace/shell.ts'
import { MUTATING, type ToolContext, type ToolSpec } from '../../kernel/tool-spec.ts'
import {
  CHANGED_PATHS_MAX_ENTRIES,
  CHANGED_PATHS_WALK_MS,
  diffSnapshots,
  type ChangedPaths,
} from './changed-paths.ts'
import { renderOutput } from './render-output.ts'
import { timeoutSignal } from '../../net/timeout-signal.ts'

/** Deadline of a command: default, least and largest (ms). */
export const BASH_TIMEOUT_MS = { default: 120_000, min: 1_000, max: 86_400_000 } as const
/** Longest command, in UTF-16 code units (a single `bash -c` argument must stay under 128 KiB). */
export const BASH_MAX_COMMAND_LENGTH = 30_000
/** Bytes of each stream streamed as `tool_output_delta` events; the rest only in the result. */
export const BASH_STREAM_BYTES = 65_536

/** Arguments of `bash`. */
export interface BashArgs {
  command: string
  timeout?: number
  sandbox_permissions?: 'use_default' | 'require_escalated'
  justification?: string
}

/** Streams one output stream as text deltas, up to {@link BASH_STREAM_BYTES}. */
function streamer(context: ToolContext, name: 'stdout' | 'stderr') {
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })
  let sent = 0
  return (chunk: Uint8Array) => {
    if (sent >= BASH_STREAM_BYTES) return
    const part = chunk.subarray(0, BASH_STREAM_BYTES - sent)
    sent += part.length
    const text = decoder.decode(part, { stream: sent < BASH_STREAM_BYTES })
    if (text !== '') context.emitOutput(text)
    if (sent >= BASH_STREAM_BYTES)
      context.emitOutput(
        `\n[bash: ${name} streaming stopped after ${BASH_STREAM_BYTES} bytes; the result keeps the head and tail]\n`,
      )
  }
}

async function snapshot(
  context: ToolContext,
  signal?: AbortSignal,
): Promise<TreeSnapshot | undefined> {
  const limit = timeoutSignal(CHANGED_PATHS_WALK_MS)
  try {
    return await context.workspace.shell!.snapshot({
      maxEntries: CHANGED_PATHS_MAX_ENTRIES,
      signal: signal ? AbortSignal.any([signal, limit]) : limit,
    })
  } catch {
    // Change tracking is best effort: a failed walk never fails the command.
    return undefined
  }
}

export const bashTool: ToolSpec<BashArgs> = {
  name: 'bash',
  pathArguments: [],
  description:
    'Run a command with `bash -c` in the workspace root (stdin closed, clean environment). ' +
    'stdout and stderr are captured separately, each as its first 64 KiB and last 36 KiB with ' +
    'exact byte counts. At the timeout (ms, default 120000) or on cancel the whole process ' +
    'group is killed. Background processes do not outlive the call. A non-zero exit is a ' +
    'failure; metadata.exit_code holds the real code and metadata.changed_paths the files the ' +
    'command created, modified or deleted. Not a sandbox: the command runs with the host ' +
    "user's rights and may leave the workspace (cd /).",
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['command'],
    properties: {
      command: {
        type: 'string',
        minLength: 1,
        maxLength: BASH_MAX_COMMAND_LENGTH,
        description: 'The bash script to run (bash -c), in the workspace root.',
      },
      timeout: {
        type: 'integer',
        minimum: BASH_TIMEOUT_MS.min,
        maximum: BASH_TIMEOUT_MS.max,
        description: `Deadline in ms (default ${BASH_TIMEOUT_MS.default}, at least ${BASH_TIMEOUT_MS.min}); covers output drain and exit.`,
      },
      sandbox_permissions: {
        type: 'string',
        enum: ['use_default', 'require_escalated'],
        description:
          'use_default (default), or require_escalated: the call then always waits for a human to approve it.',
      },
      justification: {
        type: 'string',
        maxLength: 4096,
        description: 'Why the command is needed (shown to the human asked to approve it).',
      },
    },
  },
  available: (c) => c.exec,
  scheduling: { ...MUTATING, max_parallelism: 4 },
  primaryArgument: 'command',
  requiresConfirmation(args) {
    if (args.sandbox_permissions !== 'require_escalated') return undefined
    return args.justification
      ? `bash asks for escalated permissions: ${args.justification}`
      : 'bash asks for escalated permissions'
  },
  ownDeadlineMs: (args) => args.timeout ?? BASH_TIMEOUT_MS.default,

  async run(args, context) {
    const shell = context.workspace.shell
    if (shell === undefined || !context.workspace.capabilities.exec)
      throw new IsoagentError('unsupported', 'this workspace cannot run commands')
    if (args.command.trim() === '')
      throw new IsoagentError('invalid_argument', 'command is empty (only white space)')
    const timeoutMs = args.timeout ?? BASH_TIMEOUT_MS.default
    const before = await snapshot(context, context.signal)
    if (context.signal.aborted)
      return toolFailure('bash', 'bash was cancelled before the command started', {
        type: 'cancelled',
        op: 'bash',
      })
    const stdout = new HeadTailCapture()
    const stderr = new HeadTailCapture()
    const streamOut = streamer(context, 'stdout')
    const streamErr = streamer(context, 'stderr')
    const outcome = await shell.run({
      command: args.command,
      timeoutMs,
      signal: context.signal,
      onStdout(chunk) {
        stdout.push(chunk)
        streamOut(chunk)
      },
      onStderr(chunk) {
        stderr.push(chunk)
        streamErr(chunk)
      },
    })
    // The walk after the command is bounded by entries and time, not by the call's signal.
    const after = before === undefined ? undefined : await snapshot(context)
    const changed: ChangedPaths | null =
      before !== undefined && after !== undefined ? diffSnapshots(before, after) : null

    const rendered = renderOutput(
      stdout,
      stderr,
      { ...outcome, timeoutMs },
      context.outputLimitBytes,
    )
    const stream = (s: HeadTailCapture, shown: { keptBytes: number }) => ({
      total_bytes: s.totalBytes,
      captured_bytes: s.view().keptBytes,
      shown_bytes: shown.keptBytes,
      truncated: s.truncated,
    })
    const out = stream(stdout, rendered.stdout)
    const err = stream(stderr, rendered.stderr)
    const metadata: Record<string, unknown> = {
      exit_code: outcome.exitCode,
      signal: outcome.signal,
      timeout_ms: timeoutMs,
      duration_ms: Math.round(outcome.durationMs),
      output: {
        total_bytes: out.total_bytes + err.total_bytes,
        captured_bytes: out.captured_bytes + err.captured_bytes,
        truncated:
          out.truncated ||
          err.truncated ||
          out.shown_bytes + err.shown_bytes < out.total_bytes + err.total_bytes,
        timed_out: outcome.timedOut,
        stdout: out,
        stderr: err,
      },
      cancelled: outcome.cancelled,
      pipes_held_open: outcome.pipesHeldOpen,
      background_killed: outcome.backgroundKilled,
      survivors: outcome.survivors,
      changed_paths: changed,
      sandbox_permissions: args.sandbox_permissions ?? 'use_default',
      ...(args.justification !== undefined ? { justification: args.justification } : {}),
    }
    let kind: ToolErrorKind | undefined
    if (outcome.timedOut) kind = { type: 'timeout', op: 'bash', duration_ms: timeoutMs }
    else if (outcome.cancelled) kind = { type: 'cancelled', op: 'bash' }
    else if (outcome.exitCode !== 0)
      kind = {
        type: 'transport',
        op: 'bash',
        message:
          outcome.exitCode === null
            ? `command killed by ${outcome.signal ?? 'a signal'}`
            : `command exited with code ${outcome.exitCode}`,
      }
    return kind === undefined
      ? toolSuccess('bash', rendered.text, metadata)
      : toolFailure('bash', rendered.text, kind, metadata)
  },
}
