// Our worker threads start without the host's module hooks and preloads (a TypeScript loader in
// each new thread costs tens of milliseconds) and without `--input-type`, which Node refuses in a
// worker; every other flag is kept, in both spellings (`--flag value`, `--flag=value`).
import { describe, expect, it } from 'vitest'
import { workerExecArgv } from '../../adapters/node/worker-exec-argv.ts'

describe('workerExecArgv', () => {
  it('drops loaders, preloads and --input-type with their values, keeps the rest', () => {
    const host = [
      '--require',
      '/x/tsx/preflight.cjs',
      '--import',
      'file:///x/tsx/loader.mjs',
      '--max-old-space-size=512',
      '-r',
      'dotenv/config',
      '--import=tsx',
      '--experimental-loader',
      'ts-node/esm',
      '--loader=ts-node/esm',
      '--input-type',
      'module',
      '--input-type=module',
      '--conditions',
      'development',
      '--enable-source-maps',
    ]
    expect(workerExecArgv(host)).toEqual([
      '--max-old-space-size=512',
      '--conditions',
      'development',
      '--enable-source-maps',
    ])
  })

  it('is empty for a host started without flags', () => {
    expect(workerExecArgv([])).toEqual([])
  })
})
