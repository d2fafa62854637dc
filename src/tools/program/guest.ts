import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import { GUEST_PRELUDE } from './guest-prelude.ts'
import { NATIVE_BOUNDS_PRELUDE } from './native-bounds.ts'
import type { QuickJsInstance, QuickJsPool } from './quickjs-pool.ts'

/** QuickJS's own stack limit: below the host's, so deep recursion is a guest `InternalError`. */
export const PROGRAM_STACK_BYTES = 256 * 1024

/** A guest exception, as the host reports it. */
export interface GuestError {
  status: 'error'
  errorName: string
  message: string
  stack: string
}

/** What a guest's host functions and interrupt handler reach: the run it serves. */
export interface GuestBinding {
  interrupt(): boolean
  call(name: QuickJSHandle, args: QuickJSHandle, id: QuickJSHandle | undefined): void
  log(line: QuickJSHandle): void
  done(value: QuickJSHandle): void
  fail(name: QuickJSHandle, message: QuickJSHandle, stack: QuickJSHandle): void
}

/**
 * A fresh QuickJS runtime and context of a pooled instance with the prelude evaluated: `ctx`
 * built, the host functions taken off the global object. Prepared before its program is known
 * (a program worker prepares the next guest while it waits), then bound to exactly one run.
 */
export interface Guest {
  instance: QuickJsInstance
  rt: QuickJSRuntime
  vm: QuickJSContext
  /** The prelude's function that starts a program, and the one that settles a tool call. */
  start?: QuickJSHandle
  settle?: QuickJSHandle
  /** Why the guest cannot run a program (the prelude failed). */
  failure?: GuestError
  /** False when the instance must not be reused (the host failed inside it). */
  healthy: boolean
  bind(binding: GuestBinding): void
  /** Free the runtime; false when that failed (the instance is then dropped). */
  dispose(): boolean
}

/** The fields of a guest exception (a dump that fails means the guest is out of memory). */
export function errorFields(vm: QuickJSContext, handle: QuickJSHandle): GuestError {
  try {
    const dumped = vm.dump(handle) as unknown
    if (typeof dumped === 'object' && dumped !== null) {
      const e = dumped as { name?: unknown; message?: unknown; stack?: unknown }
      return {
        status: 'error',
        errorName: String(e.name ?? 'Error'),
        message: String(e.message ?? ''),
        stack: String(e.stack ?? ''),
      }
    }
    return { status: 'error', errorName: 'Error', message: String(dumped), stack: '' }
  } catch {
    return { status: 'error', errorName: 'InternalError', message: 'out of memory', stack: '' }
  }
}

/**
 * Prepare a guest on an instance of `pool`, with the native-loop bounds when `boundNatives`.
 * Rejects only when no instance can be had (QuickJS not loadable).
 */
export async function prepareGuest(pool: QuickJsPool, boundNatives: boolean): Promise<Guest> {
  const instance = await pool.acquire()
  let binding: GuestBinding | undefined
  const handles: QuickJSHandle[] = []
  const rt = instance.module.newRuntime()
  rt.setMaxStackSize(PROGRAM_STACK_BYTES)
  // Unbound, the guest runs only the prelude (the host's own code): nothing to interrupt.
  rt.setInterruptHandler(() => binding?.interrupt() ?? false)
  const vm = rt.newContext()
  const guest: Guest = {
    instance,
    rt,
    vm,
    healthy: true,
    bind: (b) => (binding = b),
    dispose() {
      try {
        for (const handle of handles) if (handle.alive) handle.dispose()
        vm.dispose()
        rt.dispose()
        return true
      } catch {
        return false
      }
    },
  }
  const define = (name: string, fn: (...args: QuickJSHandle[]) => void) => {
    const handle = vm.newFunction(name, (...args) => {
      fn(...args)
      return undefined
    })
    vm.setProp(vm.global, name, handle)
    handle.dispose()
  }
  const evaluate = (code: string, filename: string, strict: boolean) => {
    const result = vm.evalCode(code, filename, { type: 'global', strict })
    if (!result.error) return result.value
    guest.failure ??= errorFields(vm, result.error)
    result.error.dispose()
    return undefined
  }
  try {
    define('__iso_call', (name, args, id) => binding?.call(name!, args!, id))
    define('__iso_log', (line) => binding?.log(line!))
    define('__iso_done', (value) => binding?.done(value!))
    define('__iso_fail', (name, message, stack) => binding?.fail(name!, message!, stack!))
    if (boundNatives) evaluate(NATIVE_BOUNDS_PRELUDE, 'isoagent:bounds', false)?.dispose()
    const prelude = guest.failure ? undefined : evaluate(GUEST_PRELUDE, 'isoagent:prelude', true)
    if (prelude !== undefined) {
      handles.push(prelude)
      guest.start = vm.getProp(prelude, 0)
      handles.push(guest.start)
      guest.settle = vm.getProp(prelude, 1)
      handles.push(guest.settle)
    }
  } catch (error) {
    guest.healthy = false
    guest.failure ??= {
      status: 'error',
      errorName: 'InternalError',
      message: `the program's interpreter failed: ${error instanceof Error ? error.message : String(error)}`,
      stack: '',
    }
  }
  return guest
}
