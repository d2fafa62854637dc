// The pure parts of the showcase panels: the example call the governance panel builds for a
// rule (checked against the kernel's own permission policy: the rule really decides it), and
// how the tab-vs-server view tells two results apart.
import { describe, expect, it } from 'vitest'
import { PermissionPolicy } from '../../src/kernel/permissions.ts'
import type { ToolResult } from '../../src/tool-result.ts'
import { difference } from '../../web-demo/src/panels/compare.ts'
import { exampleCall, exampleOfGlob } from '../../web-demo/src/panels/governance.ts'

const TOOLS = new Set(['read', 'write', 'edit', 'ls', 'search', 'bash', 'web_fetch'])

describe('governance panel: an example call per rule', () => {
  it.each([
    ['deny', 'write(secrets/**)'],
    ['ask', 'write(private/**)'],
    ['ask', 'bash(rm *)'],
    ['ask', 'bash(git push*)'],
    ['deny', 'edit(src/**/*.ts)'],
    ['deny', 'read(.env)'],
    ['ask', 'web_fetch(https://*.example.com/**)'],
    ['deny', 'ls'],
    ['ask', 'read(docs/{a,b}/?.md)'],
  ] as const)('%s %s: the rule decides the example', (decision, rule) => {
    const call = exampleCall(rule, TOOLS)
    expect(call).toBeDefined()
    const policy = new PermissionPolicy({ [decision]: [rule] })
    expect(policy.decide(call!.tool, call!.args)).toEqual({ decision, rule })
  })

  it('makes harmless values and gives none for tools the session lacks or wildcards', () => {
    expect(exampleOfGlob('rm *')).toBe('rm demo-note.txt')
    expect(exampleOfGlob('git push*')).toBe('git push')
    expect(exampleOfGlob('private/**')).toBe('private/demo-note.txt')
    expect(exampleCall('download(https://x/**)', TOOLS)).toBeUndefined()
    expect(exampleCall('mcp__github__*', TOOLS)).toBeUndefined()
    expect(exampleCall('*', TOOLS)).toBeUndefined()
    expect(exampleCall('write(', TOOLS)).toBeUndefined()
  })
})

describe('tab vs server: difference', () => {
  const ok = (output: string): ToolResult => ({ name: 'read', output, exitCode: 0 })
  it('is undefined for the same result and names the first difference otherwise', () => {
    expect(difference(ok('a\nb'), ok('a\nb'))).toBeUndefined()
    expect(difference(ok('a\nb'), ok('a\nc'))).toBe('output differs from line 2: "b" vs "c"')
    expect(difference(ok('a'), ok('a\nmore'))).toBe('output differs from line 2: "(end)" vs "more"')
    expect(
      difference(ok('a'), {
        name: 'read',
        output: 'no',
        exitCode: 1,
        errorKind: { type: 'not_found' },
      }),
    ).toBe('exitCode 0 vs 1')
  })
})
