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

/**
 * Run one program in a fresh QuickJS runtime of a pooled instance: `prepared` when given (a guest
 * made ready before the program was known), else one prepared now. Never throws once it has a
 * guest; rejects only when QuickJS cannot be loaded.
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
  const startedAt = Date.now()
  const deadline = now() + limits.timeoutMs
  const maxInterrupts = Math.ceil((limits.timeoutMs / 1000) * INTERRUPTS_PER_SECOND)
  const guest = prepared ?? (await prepareGuest(pool, host.boundNatives === true))
  const { instance, rt, vm } = guest
  const logs: string[] = []
  let logBytes = 0
  let logsDropped = 0
  let toolCalls = 0
  let interrupts = 0
  let stop: Stop | undefined
  let done: { valueJson: string | undefined } | undefined
  let closed = false
  let healthy = guest.healthy
  let wake: () => void = () => {}
  /** Tool calls the guest waits for, and answers not yet handed to it. */
  let pending = 0
  const answers: { id: number; json: string }[] = []
  const handles: QuickJSHandle[] = []
  const settleFn = guest.settle

  const halt = (reason: Stop) => {
    if (stop === undefined && done === undefined) stop = reason
    wake()
  }
  const finished = () => stop !== undefined || done !== undefined

  const interrupt = () => {
    if (finished()) return true
    if (host.signal.aborted) {
      halt({ status: 'cancelled' })
      return true
    }
    interrupts++
    if (interrupts > maxInterrupts) {
      halt(
        limitStop(
          'cpu',
          `the program used more than its CPU budget (${maxInterrupts} interrupt checks for timeoutMs ${limits.timeoutMs})`,
        ),
      )
      return true
    }
    if (now() > deadline) {
      halt(limitStop('timeout', `the program ran past timeoutMs (${limits.timeoutMs} ms)`))
      return true
    }
    return false
  }

  const timer = setTimeout(
    () => halt(limitStop('timeout', `the program ran past timeoutMs (${limits.timeoutMs} ms)`)),
    limits.timeoutMs,
  )
  const onAbort = () => halt({ status: 'cancelled' })
  host.signal.addEventListener('abort', onAbort, { once: true })
  if (host.signal.aborted) onAbort()

  const readString = (h: QuickJSHandle | undefined): string | undefined =>
    h !== undefined && vm.typeof(h) === 'string' ? vm.getString(h) : undefined

  /** Hand the answers that arrived to the guest (each resolves its call's promise). */
  const deliver = () => {
    while (answers.length > 0 && !finished() && settleFn !== undefined) {
      const { id, json } = answers.shift()!
      const idHandle = vm.newNumber(id)
      let text: QuickJSHandle
      try {
        text = vm.newString(json)
      } catch {
        idHandle.dispose()
        halt(
          limitStop(
            'memory',
            `the program ran out of memory (the cap is ${PROGRAM_MEMORY_BYTES} bytes)`,
          ),
        )
        return
      }
      const called = vm.callFunction(settleFn, vm.undefined, idHandle, text)
      idHandle.dispose()
      text.dispose()
      if (called.error) {
        halt(errorFields(vm, called.error))
        called.error.dispose()
      } else called.value.dispose()
    }
  }

  const outcome = (): ProgramOutcome => {
    const facts: RunFacts = {
      toolCalls,
      durationMs: Date.now() - startedAt,
      logs,
      logsDropped,
      memoryBytes: instance.memory.buffer.byteLength,
    }
    if (done !== undefined) return { ...facts, status: 'ok', valueJson: done.valueJson }
    const s = stop ?? {
      status: 'error',
      errorName: 'Error',
      message: 'the program ended without a result',
      stack: '',
    }
    if (s.status === 'error' && s.errorName === OUTPUT_LIMIT_ERROR) {
      return { ...facts, status: 'limit', limit: 'max_output_bytes', message: s.message }
    }
    if (s.status === 'error') {
      const limit = limitOf(s.errorName, s.message)
      if (limit !== undefined) {
        return {
          ...facts,
          status: 'limit',
          limit,
          message:
            limit === 'memory'
              ? `the program ran out of memory (the cap is ${PROGRAM_MEMORY_BYTES} bytes)`
              : `the program overflowed its stack (${PROGRAM_STACK_BYTES} bytes)`,
        }
      }
      const at = locate(s.stack, program)
      return { ...facts, ...s, ...at }
    }
    return { ...facts, ...s }
  }

  try {
    guest.bind({
      interrupt,
      call: (nameHandle, argsHandle, idHandle) => {
        if (finished()) throw new Error('the program has stopped')
        const name = readString(nameHandle) ?? ''
        const argsJson = readString(argsHandle) ?? '{}'
        toolCalls++
        if (toolCalls > limits.maxToolCalls) {
          halt(
            limitStop(
              'max_tool_calls',
              `the program made more than maxToolCalls (${limits.maxToolCalls}) tool calls`,
            ),
          )
          throw new Error('maxToolCalls reached')
        }
        const id =
          idHandle !== undefined && vm.typeof(idHandle) === 'number' ? vm.getNumber(idHandle) : 0
        pending++
        void (host.callRaw?.(name, argsJson) ?? callToolJson(host, name, argsJson))
          .catch(failedCall)
          .then((json) => {
            pending--
            if (closed) return
            answers.push({ id, json })
            wake()
          })
      },
      log: (line) => {
        const text = readString(line) ?? ''
        const cut =
          text.length > LOG_LIMITS.entryBytes ? `${text.slice(0, LOG_LIMITS.entryBytes)}…` : text
        const bytes = utf8Length(cut)
        if (logs.length >= LOG_LIMITS.entries || logBytes + bytes > LOG_LIMITS.totalBytes)
          logsDropped++
        else {
          logs.push(cut)
          logBytes += bytes
        }
      },
      done: (value) => {
        if (!finished()) done = { valueJson: readString(value) }
        wake()
      },
      fail: (name, message, stack) => {
        halt({
          status: 'error',
          errorName: readString(name) ?? 'Error',
          message: readString(message) ?? '',
          stack: readString(stack) ?? '',
        })
      },
    })

    const start = guest.start
    if (guest.failure !== undefined || start === undefined)
      halt(
        guest.failure ?? {
          status: 'error',
          errorName: 'InternalError',
          message: 'no prelude',
          stack: '',
        },
      )
    else {
      const code = program.isModule ? program.source : `${SCRIPT_PREFIX}${program.source}\n})`
      const entry = vm.evalCode(code, program.filename, {
        type: program.isModule ? 'module' : 'global',
        strict: program.isModule,
      })
      if (entry.error) {
        halt(errorFields(vm, entry.error))
        entry.error.dispose()
      } else {
        handles.push(entry.value)
        const flag = program.isModule ? vm.true : vm.false
        const inputs = vm.newString(inputsJson)
        handles.push(inputs)
        const max = vm.newNumber(limits.maxOutputBytes)
        handles.push(max)
        const called = vm.callFunction(start, vm.undefined, entry.value, flag, inputs, max)
        if (called.error) {
          halt(errorFields(vm, called.error))
          called.error.dispose()
        } else called.value.dispose()
      }
    }

    for (;;) {
      deliver()
      const jobs = rt.executePendingJobs()
      if (jobs.error) {
        const fields = errorFields(vm, jobs.error)
        jobs.error.dispose()
        halt(fields)
      }
      if (finished()) break
      if (pending === 0 && answers.length === 0) {
        halt({
          status: 'error',
          errorName: 'Error',
          message:
            'the program is waiting on a promise that can never settle (the guest has no timers or I/O besides ctx)',
          stack: '',
        })
        break
      }
      await new Promise<void>((resolve) => {
        wake = resolve
      })
      wake = () => {}
    }
  } catch (error) {
    healthy = false
    const message = error instanceof Error ? error.message : String(error)
    const limit = /call stack size/i.test(message)
      ? 'stack'
      : /out of memory|memory access out of bounds/i.test(message)
        ? 'memory'
        : undefined
    halt(
      limit === undefined
        ? {
            status: 'error',
            errorName: 'InternalError',
            message: `the program's interpreter failed: ${message}`,
            stack: '',
          }
        : limitStop(
            limit,
            limit === 'stack'
              ? `the program overflowed its stack (${PROGRAM_STACK_BYTES} bytes)`
              : `the program ran out of memory (the cap is ${PROGRAM_MEMORY_BYTES} bytes)`,
          ),
    )
  }
  {
    closed = true
    clearTimeout(timer)
    host.signal.removeEventListener('abort', onAbort)
    const result = outcome()
    const final = limitOutput(result, limits)
    host.onOutcome?.(final)
    // An instance that ran out of memory may hold objects it could not finish building; it is
    // dropped whole (its memory goes with it) instead of freeing the runtime inside it.
    if (result.status === 'limit' && result.limit === 'memory') healthy = false
    if (healthy)
      try {
        for (const handle of handles) if (handle.alive) handle.dispose()
        healthy = guest.dispose()
      } catch {
        healthy = false
      }
    pool.release(instance, healthy)
    return final
  }
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
