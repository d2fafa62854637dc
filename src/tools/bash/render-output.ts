import { utf8Length } from '../../text/bytes.ts'
import type { CapturedText, HeadTailCapture } from '../../text/head-tail-capture.ts'

/** Bytes kept free under the output limit for the status line and rounding. */
const SLACK_BYTES = 256

/** What ended the command, for the status line at the end of the output. */
export interface RunStatus {
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  cancelled: boolean
  pipesHeldOpen: boolean
  timeoutMs: number
}

/** The combined output and the per-stream views it shows. */
export interface RenderedOutput {
  text: string
  stdout: CapturedText
  stderr: CapturedText
}

function cutMarker(stream: string, view: CapturedText): string {
  const end = view.omittedFrom + view.omittedBytes
  return (
    `\n[bash: ${stream} cut: ${view.omittedBytes} of ${view.totalBytes} bytes omitted here ` +
    `(stream bytes ${view.omittedFrom}..${end}); kept the first ${view.omittedFrom} and the ` +
    `last ${view.totalBytes - end} bytes]\n`
  )
}

function section(stream: 'stdout' | 'stderr', view: CapturedText): string {
  return view.truncated ? view.head + cutMarker(stream, view) + view.tail : view.head
}

/** The status line closing a failed or interrupted run ('' for a clean exit 0). */
export function statusLine(status: RunStatus): string {
  if (status.timedOut) {
    const held = status.pipesHeldOpen
      ? ` (bash had exited with ${status.exitCode ?? status.signal}; a process it left behind held its output open)`
      : ''
    return `[bash: timed out after ${status.timeoutMs} ms${held}; process group killed]`
  }
  if (status.cancelled) return '[bash: cancelled; process group killed]'
  if (status.exitCode === null) return `[bash: killed by ${status.signal ?? 'a signal'}]`
  if (status.exitCode !== 0) return `[bash: exit code ${status.exitCode}]`
  return ''
}

function compose(stdout: CapturedText, stderr: CapturedText, status: string): string {
  let text = stdout.totalBytes > 0 ? section('stdout', stdout) : ''
  if (stderr.totalBytes > 0) {
    if (text !== '' && !text.endsWith('\n')) text += '\n'
    text += '[stderr]\n' + section('stderr', stderr)
  }
  if (status !== '') {
    if (text !== '' && !text.endsWith('\n')) text += '\n'
    text += status
  }
  return text
}

/**
 * The `bash` output: stdout, then `[stderr]` and stderr when there is any, then a status line
 * when the command failed or was interrupted. Each stream shows its capture (first 64 KiB + last
 * 36 KiB) with a marker stating how many bytes were omitted and where. When that would exceed
 * `limitBytes` (the session's output limit), every head and tail is shrunk in proportion, so a
 * later projection never cuts the tail away; the markers still state exact counts.
 */
export function renderOutput(
  stdout: HeadTailCapture,
  stderr: HeadTailCapture,
  status: RunStatus,
  limitBytes: number,
): RenderedOutput {
  const line = statusLine(status)
  const limit = Math.max(1024, limitBytes - SLACK_BYTES)
  let scale = 1
  for (let attempt = 0; ; attempt++) {
    const view = (c: HeadTailCapture) =>
      c.view(Math.floor(c.headLimit * scale), Math.floor(c.tailLimit * scale))
    const out = view(stdout)
    const err = view(stderr)
    const text = compose(out, err, line)
    const bytes = utf8Length(text)
    if (bytes <= limit || attempt >= 8 || scale === 0) return { text, stdout: out, stderr: err }
    scale = Math.max(0, scale * (limit / bytes) * (attempt < 3 ? 0.995 : 0.9))
  }
}
