import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const eslint = new ESLint({ cwd: root, overrideConfigFile: join(root, 'eslint.config.js') })

/** The rule ids ESLint reports for `code` as if it were the file at `path` (from the root). */
async function problems(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, path) })
  return result!.messages.map((message) => message.ruleId ?? `fatal: ${message.message}`)
}

const BOUNDARY = 'isoagent/part-boundaries'

/** An importing file of each part at several depths, with the relative path up to the root. */
const importers = {
  src: [
    ['src/a.ts', '../'],
    ['src/kernel/k.ts', '../../'],
    ['src/tools/search/walk/x.ts', '../../../../'],
  ],
  adapters: [
    ['adapters/a.ts', '../'],
    ['adapters/node/x.ts', '../../'],
    ['adapters/node/deep/er/x.ts', '../../../../'],
  ],
} as const

const forbidden = {
  src: [
    'adapters/memory/index.ts',
    'edge/index.ts',
    'web-demo/app.ts',
    'bench/search.ts',
    'test/helpers/seeded-texts.ts',
  ],
  adapters: ['edge/index.ts', 'web-demo/app.ts'],
} as const

describe('lint: part boundaries', () => {
  for (const part of ['src', 'adapters'] as const) {
    for (const [file, up] of importers[part]) {
      for (const target of forbidden[part]) {
        it(`${file} importing ${up}${target} is an error`, async () => {
          expect(
            await problems(file, `import { x } from '${up}${target}'\nexport const y = x\n`),
          ).toEqual([BOUNDARY])
        })
      }
    }
  }

  it('catches re-exports, dynamic imports and import types too', async () => {
    const file = 'src/tools/search/walk/x.ts'
    const up = '../../../../'
    for (const code of [
      `export * from '${up}adapters/index.ts'\n`,
      `export { x } from '${up}edge/index.ts'\n`,
      `export const load = () => import('${up}adapters/node/index.ts')\n`,
      `export const load = () => import(\`${up}test/helpers/seeded-texts.ts\`)\n`,
      `export type T = import('${up}adapters/index.ts').Agent\n`,
    ])
      expect(await problems(file, code), code).toEqual([BOUNDARY])
  })

  it('catches the package imported by its own name from src', async () => {
    expect(await problems('src/kernel/k.ts', "export * from 'isoagent/node'\n")).toEqual([BOUNDARY])
  })

  it('allows the arrows that point the right way', async () => {
    const allowed: [string, string][] = [
      ['src/tools/search/walk/x.ts', '../../../kernel/tool-spec.ts'],
      ['src/kernel/k.ts', './adapters/local.ts'],
      ['src/kernel/k.ts', '../workspace/index.ts'],
      ['adapters/node/x.ts', '../../src/index.ts'],
      ['adapters/node/deep/er/x.ts', '../../../../src/kernel/kernel.ts'],
      ['edge/index.ts', '../adapters/index.ts'],
      ['bin/cli.ts', '../adapters/node/index.ts'],
      ['test/unit/x.test.ts', '../../adapters/index.ts'],
      ['bench/search.ts', '../src/index.ts'],
    ]
    for (const [file, specifier] of allowed)
      expect(
        await problems(file, `export * from '${specifier}'\n`),
        `${file} -> ${specifier}`,
      ).toEqual([])
  })
})

describe('lint: edge/ by entry point', () => {
  it('keeps edge/http, edge/mcp and the edge entries out of edge/cloudflare, and mcp out of http', async () => {
    const refused: [string, string][] = [
      ['edge/http/x.ts', '../cloudflare/env.ts'],
      ['edge/http/deep/x.ts', '../../cloudflare/worker.ts'],
      ['edge/mcp/x.ts', '../cloudflare/registry.ts'],
      ['edge/mcp/x.ts', '../http/app.ts'],
      ['edge/index.ts', './cloudflare/worker.ts'],
    ]
    for (const [file, specifier] of refused)
      expect(
        await problems(file, `export * from '${specifier}'\n`),
        `${file} -> ${specifier}`,
      ).toEqual([BOUNDARY])
  })

  it('lets cloudflare use http and mcp, and http use mcp', async () => {
    const allowed: [string, string][] = [
      ['edge/cloudflare/x.ts', '../http/app.ts'],
      ['edge/cloudflare/x.ts', '../mcp/index.ts'],
      ['edge/http/x.ts', '../mcp/index.ts'],
      ['edge/http/x.ts', '../version.ts'],
      ['edge/index.ts', './http/app.ts'],
    ]
    for (const [file, specifier] of allowed)
      expect(
        await problems(file, `export * from '${specifier}'\n`),
        `${file} -> ${specifier}`,
      ).toEqual([])
  })
})

describe('lint: Web-standard globals in src', () => {
  for (const code of [
    'export const home = process.env.HOME\n',
    "export const bytes = Buffer.from('x')\n",
    'export const href = window.location.href\n',
    'export const body = document.body\n',
    'export const g = global\n',
  ]) {
    it(`${code.trim()} is an error in src`, async () => {
      expect(await problems('src/tools/x.ts', code)).toEqual(['no-restricted-globals'])
    })
  }

  it('allows what workerd and browsers share, and Node globals outside src', async () => {
    const code = "export const id = crypto.randomUUID() + new TextEncoder().encode('x').length\n"
    expect(await problems('src/tools/x.ts', code)).toEqual([])
    expect(await problems('adapters/node/x.ts', 'export const home = process.env.HOME\n')).toEqual(
      [],
    )
  })
})
