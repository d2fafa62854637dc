// The Node flags of the host process that our worker threads start with.

/** Flags (with a value) a worker thread of ours does not take from its host process. */
const NOT_FOR_WORKERS = new Set([
  // Node refuses it in a worker: a host started as `node --input-type=module -e ...` would
  // otherwise fail every program.
  '--input-type',
  // Module hooks and preloads are for the host's own code (tsx, instrumentation): each of our
  // workers is one self-contained script (or registers what it needs itself), and a TypeScript
  // loader in each new thread costs ~60 ms of its start.
  '--import',
  '--require',
  '-r',
  '--loader',
  '--experimental-loader',
])

/** The process's Node flags our worker threads (program, scan, hash) take: all but those above. */
export function workerExecArgv(args: readonly string[] = process.execArgv): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const eq = arg.indexOf('=')
    const flag = eq > 0 ? arg.slice(0, eq) : arg
    if (!NOT_FOR_WORKERS.has(flag)) out.push(arg)
    else if (eq < 0) i++
  }
  return out
}
