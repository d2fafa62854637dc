import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { findCycles } from '../../scripts/check-cycles.ts'

const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/** A temporary tree of the given files (path → source), returned as its root. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-cycles-'))
  roots.push(root)
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), source)
  }
  return root
}

describe('import cycle check', () => {
  it('finds two files that import each other', () => {
    const root = tree({
      'src/a.ts': "import { b } from './b.ts'\nexport const a = () => b\n",
      'src/b.ts': "import { a } from './a.ts'\nexport const b = () => a\n",
    })
    expect(findCycles(root)).toEqual([
      { kind: 'file', path: ['src/a.ts', 'src/b.ts', 'src/a.ts'], via: [] },
    ])
  })

  it('counts type-only imports, re-exports and dynamic imports, across parts and depths', () => {
    const root = tree({
      'src/x/deep/a.ts': "import type { B } from '../../../adapters/m/b.ts'\nexport type A = B\n",
      'adapters/m/b.ts': "export * from './c.ts'\nexport type B = string\n",
      'adapters/m/c.ts': "export const load = () => import('../../src/x/deep/a.ts')\n",
    })
    expect(findCycles(root)).toEqual([
      {
        kind: 'file',
        path: ['adapters/m/b.ts', 'adapters/m/c.ts', 'src/x/deep/a.ts', 'adapters/m/b.ts'],
        via: [],
      },
    ])
  })

  it('finds folders that import each other through different files', () => {
    const root = tree({
      'src/kernel/kernel.ts':
        "import type { Spec } from '../tools/tool.ts'\nexport type K = Spec\n",
      'src/kernel/carryover.ts': 'export class Carryover {}\n',
      'src/tools/tool.ts':
        "import type { Carryover } from '../kernel/carryover.ts'\nexport type Spec = Carryover\n",
    })
    expect(findCycles(root)).toEqual([
      {
        kind: 'folder',
        path: ['src/kernel', 'src/tools', 'src/kernel'],
        via: [
          'src/kernel/kernel.ts -> src/tools/tool.ts',
          'src/tools/tool.ts -> src/kernel/carryover.ts',
        ],
      },
    ])
  })

  it('passes imports that point one way', () => {
    const root = tree({
      'src/kernel/tool-spec.ts':
        "import type { Carryover } from './carryover.ts'\nexport type Spec = Carryover\n",
      'src/kernel/carryover.ts': "import { x } from 'some-package'\nexport const c = x\n",
      'src/tools/tool.ts': "export * from '../kernel/tool-spec.ts'\n",
      'src/tools/read.ts': "import type { Spec } from './tool.ts'\nexport type R = Spec\n",
      'adapters/index.ts': "export * from '../src/tools/read.ts'\n",
      'bin/cli.ts': "import '../adapters/index.ts'\n",
    })
    expect(findCycles(root)).toEqual([])
  })
})
