import picomatch from 'picomatch'
import { describe, expect, it } from 'vitest'
import { compilePathGlob, directoryPruner } from '../../src/tools/search/walk/path-filter.ts'

const names = [
  'packages',
  'pkg-a',
  'src',
  'lib',
  'docs',
  'x.ts',
  'y.js',
  '.hidden',
  'a b',
  'index.ts',
  '!x.ts',
]

function* paths(seed: number, count: number): Generator<string> {
  let s = seed
  const rand = (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s % n
  }
  for (let i = 0; i < count; i++) {
    const depth = 1 + rand(5)
    yield Array.from({ length: depth }, () => names[rand(names.length)]!).join('/')
  }
}

describe('directoryPruner', () => {
  const patterns = [
    'packages/*/src/**/*.{ts,js}',
    'src/*.ts',
    'src/**',
    '{src,lib}/**/*.ts',
    'packages/pkg-?/**',
    '*/src/index.ts',
    '+(src|lib)/*/x.ts',
    '**/src/*.ts',
    'docs/[a-z]*/**/*.js',
  ]
  for (const pattern of patterns) {
    it(`never prunes a directory above a match of ${pattern}`, () => {
      const prune = directoryPruner(pattern)
      expect(prune).toBeDefined()
      const match = picomatch(pattern, { dot: true })
      let matched = 0
      let pruned = 0
      for (const path of paths(pattern.length, 4000)) {
        const parts = path.split('/')
        const dirs = parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'))
        if (match(path)) {
          matched++
          for (const dir of dirs) expect(prune!(dir), `${dir} for ${path}`).toBe(true)
        } else if (dirs.some((d) => !prune!(d))) pruned++
      }
      expect(matched).toBeGreaterThan(0)
      if (!pattern.startsWith('**')) expect(pruned).toBeGreaterThan(0)
    })
  }

  it('gives no bound where it cannot tell one', () => {
    for (const glob of ['*.ts', '!src/**', '{a,b/c}/*.ts', '@(x|y/z)/**', './src/*.ts', 'a\\/b/*'])
      expect(directoryPruner(glob), glob).toBeUndefined()
  })
})

describe('compilePathGlob', () => {
  // It matches with picomatch's expression itself (and `**/name` on the name alone): the same
  // answers as picomatch's own matcher, with ripgrep's rule that a glob without `/` is a name.
  const globs = [
    '*.ts',
    '**/*.ts',
    '**/x.ts',
    'x.ts',
    '/x.ts',
    '/**/*.js',
    '**/.hidden',
    '.*',
    '**/*',
    '**/**',
    '*',
    '?.ts',
    '**/{x,y}.{ts,js}',
    '**/@(src|lib)',
    '**/+(a|b) b',
    'src/*.ts',
    'src/**/index.ts',
    'src/{x,y}.ts',
    '@(x|y).ts',
    '**/src/**',
    '[a-p]*',
    '**/[!a-p]*.ts',
    '*.{ts,js}',
    '**/!*.ts',
    '**/!x.ts',
  ]
  for (const glob of globs) {
    it(`matches what picomatch matches for ${glob}`, () => {
      const ours = compilePathGlob(glob, 'query')
      const body = glob.replace(/\[!/g, '[^').replace(/^\/+/, '')
      const reference = picomatch(body, { dot: true, basename: !glob.includes('/') })
      let matched = 0
      const all = [...paths(glob.length * 7, 3000), glob.replace(/^\/+/, '')]
      for (const path of all) {
        const expected = reference(path)
        if (expected) matched++
        expect(ours(path), path).toBe(expected)
      }
      expect(matched).toBeGreaterThan(0)
    })
  }
})

describe('compilePathGlob on plain names (string comparison instead of the expression)', () => {
  const tricky = [
    'a.d.ts',
    '.d.ts',
    'x/.d.ts',
    'x/y.d.ts',
    'd.ts',
    'x/d.ts',
    'x.d.tsx',
    'a/b/c.d.ts',
    'a\n.d.ts',
    'package.json',
    'x/package.json',
    'x/apackage.json',
    'package.jsonx',
    'x/.package.json',
    'x/package.json/y',
  ]
  for (const glob of ['*.d.ts', '**/*.d.ts', 'package.json', '**/package.json', '*.', '.d.ts']) {
    it(`${JSON.stringify(glob)} matches what its expression matches on the name`, () => {
      const test = compilePathGlob(glob, 'query')
      const re = picomatch.makeRe(glob.startsWith('**/') ? glob.slice(3) : glob, { dot: true })
      for (const path of tricky)
        expect([path, test(path)]).toEqual([
          path,
          path === glob || re.test(path.slice(path.lastIndexOf('/') + 1)),
        ])
    })
  }
})
