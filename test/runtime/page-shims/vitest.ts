// A tiny `vitest` for running the shared conformance suites inside a page: describe/it/afterEach
// collect cases, `runCases` runs them in order, and `expect` is vitest's own (@vitest/expect on
// chai, the package vitest's browser mode uses), so every matcher behaves as it does in Node.
import {
  ASYMMETRIC_MATCHERS_OBJECT,
  JestAsymmetricMatchers,
  JestChaiExpect,
  JestExtend,
  chai,
  setState,
} from '@vitest/expect'

chai.use(JestExtend)
chai.use(JestChaiExpect)
chai.use(JestAsymmetricMatchers)

type ExpectFn = (value: unknown, message?: string) => Chai.Assertion

export const expect: ExpectFn & Record<string, unknown> = Object.assign(
  (value: unknown, message?: string) => chai.expect(value, message),
  chai.expect,
  (globalThis as unknown as Record<symbol, Record<string, unknown>>)[ASYMMETRIC_MATCHERS_OBJECT],
)
setState(
  {
    assertionCalls: 0,
    isExpectingAssertions: false,
    isExpectingAssertionsError: null,
    expectedAssertionsNumber: null,
    expectedAssertionsNumberErrorGen: null,
    currentTestName: '',
  },
  expect as never,
)

type Hook = () => unknown
interface Scope {
  names: string[]
  afterEach: Hook[]
  parent?: Scope
}
interface Case {
  name: string
  run: () => unknown
  scope: Scope
}

let scope: Scope = { names: [], afterEach: [] }
const cases: Case[] = []

export function describe(name: string, body: () => void): void {
  const outer = scope
  scope = { names: [...outer.names, name], afterEach: [], parent: outer }
  try {
    body()
  } finally {
    scope = outer
  }
}

export function it(name: string, run: () => unknown): void {
  cases.push({ name: [...scope.names, name].join(' > '), run, scope })
}
export const test = it

export function afterEach(hook: Hook): void {
  scope.afterEach.push(hook)
}

/** What one case did. */
export interface CaseResult {
  name: string
  ok: boolean
  error?: string
  ms: number
}

/** Runs (and forgets) every collected case whose name `skip` does not match, one at a time. */
export async function runCases(
  skip: (name: string) => boolean = () => false,
): Promise<CaseResult[]> {
  const results: CaseResult[] = []
  for (const c of cases.splice(0)) {
    if (skip(c.name)) continue
    const started = performance.now()
    let error: unknown
    try {
      await c.run()
    } catch (e) {
      error = e
    }
    for (let s: Scope | undefined = c.scope; s !== undefined; s = s.parent) {
      for (const hook of s.afterEach) {
        try {
          await hook()
        } catch (e) {
          error ??= e
        }
      }
    }
    results.push({
      name: c.name,
      ok: error === undefined,
      ...(error === undefined
        ? {}
        : {
            error:
              error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error),
          }),
      ms: Math.round(performance.now() - started),
    })
  }
  return results
}
