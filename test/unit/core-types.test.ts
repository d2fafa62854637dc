import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const configPath = join(root, 'src/tsconfig.json')
const probeDir = join(root, 'src')

/** The compiler options `npm run lint` checks `src/` with. */
function coreOptions(): ts.CompilerOptions {
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile)
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'))
  return ts.parseJsonConfigFileContent(config, ts.sys, dirname(configPath)).options
}

/**
 * The type errors of files placed in `src/` with the given sources, checked in one program that
 * also loads the whole core through `src/index.ts` (a dependency that pulled Node's types in
 * would show here).
 */
function coreTypeErrors(sources: Record<string, string>): Record<string, string[]> {
  const options = coreOptions()
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  const probes = new Map(
    Object.entries(sources).map(([name, source]) => [
      join(probeDir, `${name}.ts`),
      `import './index.ts'\n${source}\n`,
    ]),
  )
  host.fileExists = (path) => probes.has(path) || fileExists.call(host, path)
  host.readFile = (path) => probes.get(path) ?? readFile.call(host, path)
  host.getSourceFile = (path, language, ...rest) => {
    const text = probes.get(path)
    return text === undefined
      ? getSourceFile.call(host, path, language, ...rest)
      : ts.createSourceFile(path, text, language)
  }
  const program = ts.createProgram([...probes.keys()], options, host)
  return Object.fromEntries(
    Object.keys(sources).map((name) => [
      name,
      ts
        .getPreEmitDiagnostics(program, program.getSourceFile(join(probeDir, `${name}.ts`)))
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    ]),
  )
}

describe('src type-checks against what workerd and browsers share', () => {
  it('has neither the DOM lib nor Node types', () => {
    const options = coreOptions()
    expect(options.types).toEqual([])
    expect(options.lib?.some((lib) => /dom/i.test(lib))).toBe(false)
  })

  it('rejects Node and DOM globals, and accepts the Web-standard ones the core uses', () => {
    const errors = coreTypeErrors({
      'node-dom-probe': [
        'export const home = process.env.HOME',
        "export const bytes = Buffer.from('x')",
        'export const body = document.body',
        'export const href = window.location.href',
        "export const viaGlobal = globalThis['process']",
      ].join('\n'),
      'web-probe': [
        'export const id = crypto.randomUUID()',
        "export const bytes = new TextEncoder().encode('x')",
        'export const signal = AbortSignal.timeout(1)',
        'export const channel = new MessageChannel()',
        'export const memory = new WebAssembly.Memory({ initial: 1 })',
        'export const timer: number = setTimeout(() => {}, 1)',
      ].join('\n'),
    })
    expect(errors).toEqual({
      'node-dom-probe': [
        expect.stringMatching(/Cannot find name 'process'/),
        expect.stringMatching(/Cannot find name 'Buffer'/),
        expect.stringMatching(/Cannot find name 'document'/),
        expect.stringMatching(/Cannot find name 'window'/),
        expect.stringMatching(/Property 'process' does not exist on type 'typeof globalThis'/),
      ],
      'web-probe': [],
    })
  })
})
