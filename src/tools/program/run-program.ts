import type { QuickJSHandle } from 'quickjs-emscripten-core'
import { utf8Length } from '../../text/bytes.ts'
import type { ToolResult } from '../../tool-result.ts'
import { errorFields, prepareGuest, PROGRAM_STACK_BYTES, type Guest } from './guest.ts'
import { PROGRAM_MEMORY_BYTES, type QuickJsPool } from './quickjs-pool.ts'

export { PROGRAM_STACK_BYTES } from './guest.ts'
/**
 * Interrupt checks a program may use per second of `timeoutMs`: the CPU bound that holds where
 * the clock stands still between I/O, as in deployed Workers. QuickJS checks for an interrupt
 * every few thousand operations: 1,400 to 20,000 checks per CPU-second were measured (code in
 * promise callbacks is checked most often), so where the clock runs the wall-time limit trips
 * first, and where it stands still a busy program stops after about 2.5 to 35 times `timeoutMs`.
 */
export const INTERRUPTS_PER_SECOND = 50_000
/** Bounds of `metadata.logs`. */
export const LOG_LIMITS = { entries: 100, entryBytes: 4096, totalBytes: 16_384 } as const

/** Limits of one program run. */
export interface ProgramLimits {
  timeoutMs: number
  maxToolCalls: number
  maxOutputBytes: number
}

/** The limit a failed program hit. */
export type ProgramLimit =
  'memory' | 'stack' | 'cpu' | 'timeout' | 'max_tool_calls' | 'max_output_bytes'

/** What a program may reach of the host. */
export interface ProgramHost {
  callTool(name: string, args: unknown): Promise<ToolResult>
  signal: AbortSignal
  /** Clock for the wall-time limit (tests stop it to show the interrupt count holds). */
  now?: () => number
  /**
   * Bound the built-ins that loop natively (`native-bounds.ts`): for guests on the host's own
   * thread, where nothing can stop a C loop from outside.
   */
  boundNatives?: boolean
  /**
   * A tool call as JSON in and out (the guest's `{output, exitCode, metadata, errorKind?}`); when
   * present it is used instead of {@link callTool} (a worker forwards calls to its host this way).
   */
  callRaw?: (name: string, argsJson: string) => Promise<string>
  /**
   * Told the outcome as soon as it is known, before the guest's runtime is freed (a worker
   * answers its host first and frees the runtime while the host goes on).
   */
  onOutcome?: (outcome: ProgramOutcome) => void
}

/** The script to run. */
export interface ProgramSource {
  source: string
  filename: string
  /** An ES module with `export default`; else a function body (`ctx`, `inputs` in scope). */
  isModule: boolean
}

interface RunFacts {
  toolCalls: number
  durationMs: number
  logs: string[]
  logsDropped: number
  memoryBytes: number
}

/** How a run ended. */
export type ProgramOutcome = RunFacts &
  (
    | { status: 'ok'; valueJson: string | undefined }
    | {
        status: 'error'
        errorName: string
        message: string
        stack: string
        line?: number
        column?: number
      }
    | { status: 'limit'; limit: ProgramLimit; message: string }
    | { status: 'cancelled' }
  )

type Stop =
  | { status: 'limit'; limit: ProgramLimit; message: string }
  | { status: 'cancelled' }
  | { status: 'error'; errorName: string; message: string; stack: string }

/** The name the prelude reports an oversized return value under. */
const OUTPUT_LIMIT_ERROR = 'OutputLimitError'
const SCRIPT_PREFIX = '(async function run(ctx, inputs) {'

function limitStop(limit: ProgramLimit, message: string): Stop {
  return { status: 'limit', limit, message }
}

/** Maps a guest exception to the limit it means, if any. */
function limitOf(name: string, message: string): ProgramLimit | undefined {
  if (name === 'InternalError' && /^out of memory$/i.test(message)) return 'memory'
  if (name === 'InternalError' && /^stack overflow$/i.test(message)) return 'stack'
  if (name === 'RangeError' && /call stack size/i.test(message)) return 'stack'
  return undefined
}

/** One run's state, shared by the steps of {@link runProgram}. */
interface Run {
  readonly pool: QuickJsPool
  readonly program: ProgramSource
  readonly inputsJson: string
  readonly limits: ProgramLimits
  readonly host: ProgramHost
  readonly guest: Guest
  readonly now: () => number
  readonly startedAt: number
  readonly deadline: number
  readonly maxInterrupts: number
  logs: string[]
  logBytes: number
  logsDropped: number
  toolCalls: number
  interrupts: number
  stop?: Stop
  done?: { valueJson: string | undefined }
  /** The run is over: late answers are dropped. */
  closed: boolean
  healthy: boolean
  /** Resumes the pump when it waits (an answer arrived, or the run stopped). */
  wake: () => void
  /** Tool calls the guest waits for, and answers not yet handed to it. */
  pending: number
  answers: { id: number; json: string }[]
  handles: QuickJSHandle[]
}

/**
 * Run one program in a fresh QuickJS runtime of a pooled instance: `prepared` when given (a guest
 * made ready before the program was known), else one prepared now. Never throws once it has a
 * guest; rejects only when QuickJS cannot be loaded. The steps: open the run (clock, limits),
 * watch the deadline and cancellation, bind the guest's host functions to the run, start the
 * program, pump its jobs and answers until it ends, then settle (outcome, runtime freed).
 */
export async function runProgram(
  pool: QuickJsPool,
  program: ProgramSource,
  inputsJson: string,
  limits: ProgramLimits,
  host: ProgramHost,
  prepared?: Guest,
): Promise<ProgramOutcome> {
  const now = host.now ?? Date.now
  const clock = { startedAt: Date.now(), deadline: now() + limits.timeoutMs }
  const guest = prepared ?? (await prepareGuest(pool, host.boundNatives === true))
  const run = openRun({ pool, program, inputsJson, limits, host, guest, now, ...clock })
  const unwatch = watchLimits(run)
  try {
    bindHost(run)
    startProgram(run)
    await pump(run)
  } catch (error) {
    interpreterFailed(run, error)
  }
  run.closed = true
  unwatch()
  return settle(run)
}

function openRun(
  fields: Pick<
    Run,
    | 'pool'
    | 'program'
    | 'inputsJson'
    | 'limits'
    | 'host'
    | 'guest'
    | 'now'
    | 'startedAt'
    | 'deadline'
  >,
): Run {
  return {
    ...fields,
    maxInterrupts: Math.ceil((fields.limits.timeoutMs / 1000) * INTERRUPTS_PER_SECOND),
    logs: [],
    logBytes: 0,
    logsDropped: 0,
    toolCalls: 0,
    interrupts: 0,
    closed: false,
    healthy: fields.guest.healthy,
    wake: () => {},
    pending: 0,
    answers: [],
    handles: [],
  }
}

/** Stop the run for `reason` (the first reason wins; a finished run keeps its result). */
function halt(run: Run, reason: Stop): void {
  if (run.stop === undefined && run.done === undefined) run.stop = reason
  run.wake()
}

const finished = (run: Run) => run.stop !== undefined || run.done !== undefined

const timeoutStop = (limits: ProgramLimits) =>
  limitStop('timeout', `the program ran past timeoutMs (${limits.timeoutMs} ms)`)

/** The wall-clock deadline (even while the guest waits) and cancellation; returns the unwatch. */
function watchLimits(run: Run): () => void {
  const { host, limits } = run
  const timer = setTimeout(() => halt(run, timeoutStop(limits)), limits.timeoutMs)
  const onAbort = () => halt(run, { status: 'cancelled' })
  host.signal.addEventListener('abort', onAbort, { once: true })
  if (host.signal.aborted) onAbort()
  return () => {
    clearTimeout(timer)
    host.signal.removeEventListener('abort', onAbort)
  }
}

/** QuickJS's interrupt handler: true stops the guest (cancelled, CPU budget, deadline). */
function interrupt(run: Run): boolean {
  if (finished(run)) return true
  if (run.host.signal.aborted) {
    halt(run, { status: 'cancelled' })
    return true
  }
  run.interrupts++
  if (run.interrupts > run.maxInterrupts) {
    const message = `the program used more than its CPU budget (${run.maxInterrupts} interrupt checks for timeoutMs ${run.limits.timeoutMs})`
    halt(run, limitStop('cpu', message))
    return true
  }
  if (run.now() > run.deadline) {
    halt(run, timeoutStop(run.limits))
    return true
  }
  return false
}

const readString = (run: Run, h: QuickJSHandle | undefined): string | undefined =>
  h !== undefined && run.guest.vm.typeof(h) === 'string' ? run.guest.vm.getString(h) : undefined

/** The guest's `ctx.tool(name, args)`: counted, sent to the host, its answer queued. */
function toolCall(run: Run, name: QuickJSHandle, args: QuickJSHandle, idHandle?: QuickJSHandle) {
  const { vm } = run.guest
  const { host, limits } = run
  if (finished(run)) throw new Error('the program has stopped')
  const nameText = readString(run, name) ?? ''
  const argsJson = readString(run, args) ?? '{}'
  run.toolCalls++
  if (run.toolCalls > limits.maxToolCalls) {
    const message = `the program made more than maxToolCalls (${limits.maxToolCalls}) tool calls`
    halt(run, limitStop('max_tool_calls', message))
    throw new Error('maxToolCalls reached')
  }
  const id = idHandle !== undefined && vm.typeof(idHandle) === 'number' ? vm.getNumber(idHandle) : 0
  run.pending++
  void (host.callRaw?.(nameText, argsJson) ?? callToolJson(host, nameText, argsJson))
    .catch(failedCall)
    .then((json) => {
      run.pending--
      if (run.closed) return
      run.answers.push({ id, json })
      run.wake()
    })
}

/** The guest's `console.log`: kept within {@link LOG_LIMITS}, the rest counted as dropped. */
function log(run: Run, line: QuickJSHandle): void {
  const text = readString(run, line) ?? ''
  const cut =
    text.length > LOG_LIMITS.entryBytes ? `${text.slice(0, LOG_LIMITS.entryBytes)}…` : text
  const bytes = utf8Length(cut)
  if (run.logs.length >= LOG_LIMITS.entries || run.logBytes + bytes > LOG_LIMITS.totalBytes)
    run.logsDropped++
  else {
    run.logs.push(cut)
    run.logBytes += bytes
  }
}

/** Point the guest's host functions and interrupt handler at this run. */
function bindHost(run: Run): void {
  run.guest.bind({
    interrupt: () => interrupt(run),
    call: (name, args, id) => toolCall(run, name, args, id),
    log: (line) => log(run, line),
    done: (value) => {
      if (!finished(run)) run.done = { valueJson: readString(run, value) }
      run.wake()
    },
    fail: (name, message, stack) =>
      halt(run, {
        status: 'error',
        errorName: readString(run, name) ?? 'Error',
        message: readString(run, message) ?? '',
        stack: readString(run, stack) ?? '',
      }),
  })
}

/** Evaluate the program and call the prelude's `start` with it, its inputs and output cap. */
function startProgram(run: Run): void {
  const { guest, program, limits } = run
  const { vm, start } = guest
  if (guest.failure !== undefined || start === undefined) {
    const noPrelude = {
      status: 'error',
      errorName: 'InternalError',
      message: 'no prelude',
      stack: '',
    }
    halt(run, guest.failure ?? (noPrelude as Stop))
    return
  }
  const code = program.isModule ? program.source : `${SCRIPT_PREFIX}${program.source}\n})`
  const entry = vm.evalCode(code, program.filename, {
    type: program.isModule ? 'module' : 'global',
    strict: program.isModule,
  })
  if (entry.error) {
    halt(run, errorFields(vm, entry.error))
    entry.error.dispose()
    return
  }
  const inputs = vm.newString(run.inputsJson)
  const max = vm.newNumber(limits.maxOutputBytes)
  run.handles.push(entry.value, inputs, max)
  const flag = program.isModule ? vm.true : vm.false
  const called = vm.callFunction(start, vm.undefined, entry.value, flag, inputs, max)
  if (called.error) {
    halt(run, errorFields(vm, called.error))
    called.error.dispose()
  } else called.value.dispose()
}

/** Hand the answers that arrived to the guest (each resolves its call's promise). */
function deliver(run: Run): void {
  const { vm, settle: settleFn } = run.guest
  while (run.answers.length > 0 && !finished(run) && settleFn !== undefined) {
    const { id, json } = run.answers.shift()!
    const idHandle = vm.newNumber(id)
    let text: QuickJSHandle
    try {
      text = vm.newString(json)
    } catch {
      idHandle.dispose()
      halt(run, limitStop('memory', outOfMemoryMessage()))
      return
    }
    const called = vm.callFunction(settleFn, vm.undefined, idHandle, text)
    idHandle.dispose()
    text.dispose()
    if (called.error) {
      halt(run, errorFields(vm, called.error))
      called.error.dispose()
    } else called.value.dispose()
  }
}

/** Run the guest's jobs, hand it answers, and wait for more, until it finishes or stops. */
async function pump(run: Run): Promise<void> {
  const { guest } = run
  for (;;) {
    deliver(run)
    const jobs = guest.rt.executePendingJobs()
    if (jobs.error) {
      const fields = errorFields(guest.vm, jobs.error)
      jobs.error.dispose()
      halt(run, fields)
    }
    if (finished(run)) return
    if (run.pending === 0 && run.answers.length === 0) {
      halt(run, {
        status: 'error',
        errorName: 'Error',
        message:
          'the program is waiting on a promise that can never settle (the guest has no timers or I/O besides ctx)',
        stack: '',
      })
      return
    }
    await new Promise<void>((resolve) => {
      run.wake = resolve
    })
    run.wake = () => {}
  }
}

/** The host failed inside QuickJS (a wasm trap): the instance is not reused. */
function interpreterFailed(run: Run, error: unknown): void {
  run.healthy = false
  const message = error instanceof Error ? error.message : String(error)
  if (/call stack size/i.test(message)) halt(run, limitStop('stack', overflowMessage()))
  else if (/out of memory|memory access out of bounds/i.test(message))
    halt(run, limitStop('memory', outOfMemoryMessage()))
  else
    halt(run, {
      status: 'error',
      errorName: 'InternalError',
      message: `the program's interpreter failed: ${message}`,
      stack: '',
    })
}

/** Report the outcome, then free the guest's runtime and give its instance back. */
function settle(run: Run): ProgramOutcome {
  const result = outcomeOf(run)
  const final = limitOutput(result, run.limits)
  run.host.onOutcome?.(final)
  // An instance that ran out of memory may hold objects it could not finish building; it is
  // dropped whole (its memory goes with it) instead of freeing the runtime inside it.
  let healthy = run.healthy && !(result.status === 'limit' && result.limit === 'memory')
  if (healthy)
    try {
      for (const handle of run.handles) if (handle.alive) handle.dispose()
      healthy = run.guest.dispose()
    } catch {
      healthy = false
    }
  run.pool.release(run.guest.instance, healthy)
  return final
}

const outOfMemoryMessage = () =>
  `the program ran out of memory (the cap is ${PROGRAM_MEMORY_BYTES} bytes)`
const overflowMessage = () => `the program overflowed its stack (${PROGRAM_STACK_BYTES} bytes)`

/** How the run ended, from its result or the reason it stopped. */
function outcomeOf(run: Run): ProgramOutcome {
  const facts: RunFacts = {
    toolCalls: run.toolCalls,
    durationMs: Date.now() - run.startedAt,
    logs: run.logs,
    logsDropped: run.logsDropped,
    memoryBytes: run.guest.instance.memory.buffer.byteLength,
  }
  if (run.done !== undefined) return { ...facts, status: 'ok', valueJson: run.done.valueJson }
  const s = run.stop ?? {
    status: 'error',
    errorName: 'Error',
    message: 'the program ended without a result',
    stack: '',
  }
  if (s.status !== 'error') return { ...facts, ...s }
  if (s.errorName === OUTPUT_LIMIT_ERROR)
    return { ...facts, status: 'limit', limit: 'max_output_bytes', message: s.message }
  const limit = limitOf(s.errorName, s.message)
  if (limit !== undefined) {
    const message = limit === 'memory' ? outOfMemoryMessage() : overflowMessage()
    return { ...facts, status: 'limit', limit, message }
  }
  return { ...facts, ...s, ...locate(s.stack, run.program) }
}

/** A host tool call with JSON in and out, as the guest sees it; never rejects. */
export function callToolJson(
  host: Pick<ProgramHost, 'callTool'>,
  name: string,
  argsJson: string,
): Promise<string> {
  let args: unknown
  try {
    args = JSON.parse(argsJson)
  } catch {
    args = undefined
  }
  return host.callTool(name, args).then(guestResult, failedCall)
}

function failedCall(error: unknown): string {
  return JSON.stringify({ output: `tool call failed: ${String(error)}`, exitCode: 1, metadata: {} })
}

function guestResult(result: ToolResult): string {
  return JSON.stringify({
    output: result.output,
    exitCode: result.exitCode,
    metadata: result.metadata ?? {},
    ...(result.errorKind ? { errorKind: result.errorKind } : {}),
  })
}

function limitOutput(result: ProgramOutcome, limits: ProgramLimits): ProgramOutcome {
  if (result.status !== 'ok' || result.valueJson === undefined) return result
  const bytes = utf8Length(result.valueJson)
  if (bytes <= limits.maxOutputBytes) return result
  const { valueJson: _v, ...facts } = result
  return {
    ...facts,
    status: 'limit',
    limit: 'max_output_bytes',
    message: `the program's return value is ${bytes} bytes of JSON, over maxOutputBytes (${limits.maxOutputBytes})`,
  }
}

function locate(stack: string, program: ProgramSource): { line?: number; column?: number } {
  const escaped = program.filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const match = new RegExp(`${escaped}:(\\d+)(?::(\\d+))?`).exec(stack)
  if (match === null) return {}
  const line = Number(match[1])
  let column = match[2] === undefined ? undefined : Number(match[2])
  if (!program.isModule && line === 1 && column !== undefined)
    column = Math.max(1, column - SCRIPT_PREFIX.length)
  return column === undefined ? { line } : { line, column }
}
