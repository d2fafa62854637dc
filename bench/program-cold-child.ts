// The child processes of bench/program.ts's cold start: each imports only what a user's process
// would (isoagent and isoagent/node, or a bare quickjs-emscripten), so the first program is timed
// without the benchmark's own heavy imports (esbuild, Miniflare) in the heap. Prints one JSON line.
//
//   npx tsx bench/program-cold-child.ts ours|ours-prewarm|bare
import { performance } from 'node:perf_hooks'

async function ours(prewarm: boolean): Promise<void> {
  const { Agent, memoryWorkspace } = await import('../adapters/index.ts')
  const { nodeProgramRunner } = await import('../adapters/node/index.ts')
  const noop = {
    name: 'noop',
    description: 'Returns its argument.',
    parameters: {
      type: 'object' as const,
      additionalProperties: false,
      properties: { n: { type: 'integer' as const } },
    },
    run: (args: Record<string, unknown>) => `n=${String(args.n)}`,
  }
  const session = await Agent.create().session(memoryWorkspace({ 'a.txt': 'alpha\n' }), {
    tools: [noop],
  })
  if (prewarm) void nodeProgramRunner.prewarm()
  const timed = async (op: () => Promise<{ exitCode: number; output: string }>) => {
    const t = performance.now()
    const r = await op()
    if (r.exitCode !== 0) throw new Error(`bench call failed: ${r.output}`)
    return performance.now() - t
  }
  const hostMs = await timed(() => session.tool('noop', { n: 1 }))
  const programMs = await timed(() => session.program({ source: 'return 1' }))
  const secondMs = await timed(() => session.program({ source: 'return 2' }))
  console.log(JSON.stringify({ programMs, hostMs, secondMs }))
  await session.close()
  await nodeProgramRunner.close()
}

/** A bare quickjs-emscripten module + context + eval, from its import. */
async function bare(): Promise<void> {
  const t = performance.now()
  const { newQuickJSWASMModuleFromVariant } = await import('quickjs-emscripten-core')
  const imported = (await import('@jitl/quickjs-wasmfile-release-sync')) as unknown as {
    default: Parameters<typeof newQuickJSWASMModuleFromVariant>[0]
  }
  const module = await newQuickJSWASMModuleFromVariant(imported.default)
  const vm = module.newContext()
  const value = vm.unwrapResult(vm.evalCode('1 + 1'))
  if (vm.getNumber(value) !== 2) throw new Error('bare eval failed')
  value.dispose()
  vm.dispose()
  console.log(JSON.stringify({ bareMs: performance.now() - t }))
}

const which = process.argv[2]
if (which === 'bare') await bare()
else await ours(which === 'ours-prewarm')
