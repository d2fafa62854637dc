// The packed package type-checks in a fresh TypeScript project that lacks the optional peers
// (`ai`, `@ai-sdk/provider`, `playwright-core`) with skipLibCheck off: what a user who installs
// isoagent and runs `tsc` meets. Needs dist/ (`npm test` builds first).
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const repo = resolve(import.meta.dirname, '../..')
const tsc = join(repo, 'node_modules/typescript/bin/tsc')
let dir = ''

function linkDependencies(project: string): void {
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>
  }
  for (const name of [...Object.keys(pkg.dependencies), '@types/node']) {
    const target = join(project, 'node_modules', name)
    mkdirSync(dirname(target), { recursive: true })
    symlinkSync(join(repo, 'node_modules', name), target)
  }
}

function typecheck(source: string): string {
  writeFileSync(join(dir, 'index.ts'), source)
  try {
    execFileSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', stdio: 'pipe' })
    return ''
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error)
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isoagent-packed-'))
  const out = execFileSync(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', dir],
    {
      cwd: repo,
      encoding: 'utf8',
    },
  )
  const [{ filename }] = JSON.parse(out) as [{ filename: string }]
  mkdirSync(join(dir, 'node_modules/isoagent'), { recursive: true })
  execFileSync('tar', [
    'xzf',
    join(dir, filename),
    '-C',
    join(dir, 'node_modules/isoagent'),
    '--strip-components=1',
  ])
  linkDependencies(dir)
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        lib: ['ES2022', 'DOM'],
        types: ['node'],
      },
      include: ['index.ts'],
    }),
  )
}, 120_000)

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true })
})

describe('the packed package without the optional peers', () => {
  it('type-checks the root, node, s3 and browser entries (fromAISDK in the root)', () => {
    const errors = typecheck(`
      import { memoryWorkspace, Session, fromAISDK, type ToolResult } from 'isoagent'
      import { localWorkspace } from 'isoagent/node'
      import { s3Workspace } from 'isoagent/s3'
      import { browserWorkspace } from 'isoagent/browser'
      const ws = memoryWorkspace({ 'a.txt': 'x' })
      export const check: [typeof ws, typeof Session, typeof fromAISDK, ToolResult | undefined] =
        [ws, Session, fromAISDK, undefined]
      export const entries = [localWorkspace, s3Workspace, browserWorkspace]
    `)
    expect(errors).toBe('')
  }, 120_000)

  it('names the AI SDK only behind isoagent/ai-sdk, which needs the peers', () => {
    const errors = typecheck(
      `import { toAISDKTools } from 'isoagent/ai-sdk'\nexport const t = toAISDKTools\n`,
    )
    expect(errors).toMatch(/Cannot find module '(ai|@ai-sdk\/provider)'/)
  }, 60_000)
})
