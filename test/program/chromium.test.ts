// The program suite in Debian Chromium (playwright-core): the cases bundled for the browser with
// Node built-ins forbidden, served from 127.0.0.1 with QuickJS's .wasm beside the bundle as
// application/wasm, where the variant's browser loader fetches it (as a Vite build emits it).
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM, MISSING_CHROMIUM } from '../runtime/chromium-launch.ts'
import { nodeSpecifiers } from '../runtime/bundle.ts'
import { programCases } from './program-cases.ts'
import { openProgramPage, wasmRequests, type ProgramPage } from './program-page.ts'

const ENTRY = `
import { quickJsFromModule } from '../../adapters/index.ts'
import { runProgramCases } from './program-cases.ts'

let compiled
globalThis.runProgramCase = async (name, loader) => {
  let env = {}
  if (loader === 'compiled') {
    compiled ??= WebAssembly.compileStreaming(fetch('/emscripten-module.wasm'))
    env = { quickjs: quickJsFromModule(await compiled) }
  }
  return runProgramCases(env, (c) => c.name === name)
}
`

it(`has Debian Chromium at ${CHROMIUM}`, () => {
  expect(existsSync(CHROMIUM), MISSING_CHROMIUM).toBe(true)
})

describe('program (Chromium)', () => {
  let opened: ProgramPage | undefined
  const page = () => opened!

  beforeAll(async () => {
    opened = await openProgramPage({
      entry: ENTRY,
      title: 'isoagent program',
      readyGlobal: 'runProgramCase',
    })
  }, 120_000)

  afterAll(async () => {
    await opened?.close()
  })

  it('bundles with no Node built-in', () => {
    expect(nodeSpecifiers(page().code)).toEqual([])
  })

  for (const c of programCases) {
    it(
      c.name,
      async () => {
        const result = await page().runCase(c.name)
        expect(result.error ?? '').toBe('')
        expect(result.ok).toBe(true)
      },
      300_000,
    )
  }

  it('a module the page compiled itself (quickJsFromModule) serves the same', async () => {
    const result = await page().runCase(programCases[0]!.name, 'compiled')
    expect(result.error ?? '').toBe('')
    expect(wasmRequests(page())).toBeGreaterThanOrEqual(2)
    expect(page().pageErrors).toEqual([])
  }, 60_000)
})
