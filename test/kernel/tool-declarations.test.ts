// Issue 28, "Kernel as named steps": what differs between tools (nesting, default deadline, path
// arguments) is declared on each ToolSpec, so a tool the kernel has never heard of gets the
// same rules by declaring them.
import { describe, expect, it } from 'vitest'
import { memoryWorkspace, TOOL_TIMEOUT_DEFAULTS } from '../../adapters/index.ts'
import { Kernel } from '../../src/kernel/kernel.ts'
import { READ_ONLY, type ToolSpec } from '../../src/kernel/tool-spec.ts'
import { memoryArtifactStore } from '../../src/projection/artifact-store.ts'
import { ToolResultTransformPolicy } from '../../src/projection/policy.ts'
import { toolSuccess } from '../../src/tool-result.ts'
import type { Origin } from '../../src/kernel/origin.ts'

type Spec = ToolSpec<Record<string, unknown>>

function tool(name: string, extra: Partial<Spec>, body?: Spec['run']): Spec {
  return {
    name,
    description: name,
    parameters: { type: 'object', additionalProperties: true },
    available: () => true,
    scheduling: { ...READ_ONLY, max_parallelism: 8 },
    validate: () => undefined,
    run: body ?? (async () => toolSuccess(name, 'ran')),
    ...extra,
  }
}

/** A tool that calls the tool named in `args.call` (with `args.args`) and reports the result. */
const caller =
  (name: string): Spec['run'] =>
  async (args, context) => {
    const child = await context.invoke(String(args.call), args.args ?? {})
    return toolSuccess(name, `${child.exitCode}: ${child.output}`)
  }

function kernel(tools: Spec[]) {
  return new Kernel(memoryWorkspace({ 'a.txt': 'a\n' }), tools, {
    policy: ToolResultTransformPolicy.conservative(),
    artifactStore: memoryArtifactStore(),
  })
}

const host = (k: Kernel, name: string, args: unknown) =>
  k.invoke({ name, args, origin: 'host_direct' })

describe('tools declare what the kernel used to hard-code', () => {
  it('pathArguments: declared paths are contained, undeclared ones are not paths', async () => {
    const k = kernel([
      tool('mover', { pathArguments: ['target', 'items[].from'] }),
      tool('remote', { pathArguments: [] }),
      tool('legacy', {}),
    ])
    const escape = await host(k, 'mover', { target: '../outside' })
    expect(escape.exitCode).toBe(1)
    expect(escape.output).toMatch(/^mover refused: /)
    const nested = await host(k, 'mover', {
      target: 'ok',
      items: [{ from: 'a' }, { from: '../x' }],
    })
    expect(nested.output).toMatch(/^mover refused: /)
    expect((await host(k, 'mover', { target: 'in/side', items: [{ from: 'a' }] })).exitCode).toBe(0)
    // `path` is not a workspace path of a tool that declares none (an MCP tool's URL path).
    expect((await host(k, 'remote', { path: '../../etc/passwd' })).exitCode).toBe(0)
    // A tool that declares nothing keeps the old default: file_path, path, files[].path.
    expect((await host(k, 'legacy', { files: [{ path: '../x' }] })).output).toMatch(/refused/)
    expect((await host(k, 'legacy', { file_path: '/../../x' })).output).toMatch(/refused/)
  })

  it('timeoutMs: a tool default deadline, which toolTimeoutMs overrides', async () => {
    const stopping = tool('stopping', { timeoutMs: 50 }, async (_args, context) => {
      await new Promise((r) => context.signal.addEventListener('abort', r, { once: true }))
      throw context.signal.reason
    })
    const k = kernel([stopping])
    const started = Date.now()
    const r = await host(k, 'stopping', {})
    expect(r.errorKind).toEqual({ type: 'timeout', op: 'stopping', duration_ms: 50 })
    expect(Date.now() - started).toBeLessThan(1_500)
    const k2 = new Kernel(memoryWorkspace(), [stopping], {
      policy: ToolResultTransformPolicy.conservative(),
      artifactStore: memoryArtifactStore(),
      toolTimeoutMs: { stopping: 120 },
    })
    expect((await host(k2, 'stopping', {})).errorKind).toMatchObject({ duration_ms: 120 })
  })

  it('nesting: containers pass host trust and do not nest in themselves; agent runners never nest', async () => {
    const origins: Origin[] = []
    const k = kernel([
      tool('workflow', { nesting: { container: true, nonReentrant: true } }, caller('workflow')),
      tool('plain', {}, caller('plain')),
      tool('agents', { nesting: { runsAgents: true } }, caller('agents')),
      tool('more_agents', { nesting: { runsAgents: true } }, caller('more_agents')),
      tool('probe', {}),
    ])
    const sub = k.events.subscribe()
    const reading = (async () => {
      for await (const e of sub)
        if (e.type === 'tool_state' && e.toolName === 'probe' && e.state === 'created')
          origins.push(e.origin)
    })()
    expect((await host(k, 'workflow', { call: 'probe' })).output).toBe('0: ran')
    expect((await host(k, 'plain', { call: 'probe' })).output).toBe('0: ran')
    const self = await host(k, 'workflow', { call: 'workflow', args: { call: 'probe' } })
    expect(self.output).toBe('1: workflow cannot be nested inside workflow')
    const deeper = await host(k, 'workflow', {
      call: 'plain',
      args: { call: 'workflow', args: { call: 'probe' } },
    })
    expect(deeper.output).toBe('0: 1: workflow cannot be nested inside workflow')
    const agents = await host(k, 'agents', { call: 'plain', args: { call: 'more_agents' } })
    expect(agents.output).toMatch(/^0: 1: more_agents cannot be called from inside a task/)
    k.close()
    await reading
    // Under the host-called container its child keeps host trust; under a plain tool it is nested.
    expect(origins).toEqual(['host_direct_nested', 'nested'])
  })

  it('TOOL_TIMEOUT_DEFAULTS sums up what the built-in tools declare', () => {
    expect(TOOL_TIMEOUT_DEFAULTS).toEqual({
      read: 60_000,
      write: 60_000,
      edit: 60_000,
      patch: 60_000,
      ls: 30_000,
      batch: 600_000,
      task: 1_800_000,
      parallel_task: 1_800_000,
    })
  })
})
