import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

/** mulberry32: a small seeded PRNG, so every run builds byte-identical trees. */
export function prng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
  const chance = (p: number) => next() < p
  return { next, int, pick, chance }
}
export type Rng = ReturnType<typeof prng>

/** A generated tree: regular files by relative path, symlinks, and what we know about them. */
export interface GeneratedTree {
  files: Map<string, Uint8Array>
  /** Symlinks inside the tree (local disk only): relative path → relative target. */
  symlinks: Map<string, string>
  /** Files with a NUL in their first bytes. */
  binary: Set<string>
}

const enc = new TextEncoder()

/**
 * Line vocabulary: code-like text, regex metacharacters, accents, CJK, Greek, full-width digits
 * and case variants. No lone CR and no U+2028/U+2029: JavaScript's `^`/`$`/`.` treat those as
 * line terminators and ripgrep does not, so lines never contain them (a documented engine
 * difference, not a walk one).
 */
const LINES = [
  'function fooBar(x) { return x + 1 }',
  'const bazQux = fooBar(41)',
  "import { readFile } from './io'",
  'import * as path from "node:path"',
  'export default class Widget {}',
  '// TODO: refactor this',
  '// FIXME later',
  '# TODO(ann): handle errors',
  'error: something failed at 0x1F',
  'ERROR 500 Internal',
  'Error: cannot read property',
  'warning: deprecated call',
  'x = a.b*c (d) + [e] {f} ^g $h |i| ?j',
  'price: $12.50 (approx.)',
  'path = C:\\temp\\file.txt',
  'the cat sat on the mat',
  'concatenate écat caté cat_x xcat',
  'café naïve résumé Ærøskøbing',
  'CAFÉ NAÏVE RÉSUMÉ',
  'Ελληνικά κείμενα ΣΊΣΥΦΟΣ',
  '日本語のテキストです',
  '中文字符 汉字 漢字',
  '한국어 문장',
  'ＦＵＬＬ　ｗｉｄｔｈ　１２３',
  'digits 12345 and ٣٤٥ arabic-indic',
  'phone 555-0100 zip 90210',
  '    indented line',
  '\ttabbed\tline',
  'trailing spaces   ',
  '}',
  '{',
  '',
  'Straße STRASSE strasse',
  'emoji 😀 grin 🎉',
  'snake_case_name camelCaseName PascalName',
  'end;',
  'a|b|c',
  'regex: ^start and end$',
]

const WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'TODO',
  'fooBar',
  'naïve',
  '数据',
  'x',
  '==',
  '->',
]

function contentText(rng: Rng): string {
  const kind = rng.int(20)
  if (kind === 0) return ''
  const n = 1 + rng.int(kind < 3 ? 120 : 25)
  const lines: string[] = []
  for (let i = 0; i < n; i++) {
    if (rng.chance(0.005)) {
      // A long line: thousands of characters, with a match deep inside.
      const len = 1000 + rng.int(8000)
      let s = ''
      while (s.length < len) s += rng.pick(WORDS) + ' '
      lines.push(s + ' needle_in_long_line ' + s.slice(0, 100))
    } else if (rng.chance(0.2)) {
      const words = Array.from({ length: 1 + rng.int(10) }, () => rng.pick(WORDS))
      lines.push(words.join(' '))
    } else lines.push(rng.pick(LINES))
  }
  const eol = rng.chance(0.2) ? '\r\n' : '\n'
  let text = lines.join(eol)
  if (!rng.chance(0.15)) text += eol // most files end with a line end; some do not
  if (rng.chance(0.03)) text = '\uFEFF' + text // UTF-8 BOM
  return text
}

function binaryBytes(rng: Rng): Uint8Array {
  // Magic, then a NUL within the first bytes, then text that would match many patterns.
  const head = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]
  const tail = enc.encode(
    '\nTODO error fooBar café 日本語 needle\n' + rng.pick(LINES) + '\n' + rng.pick(LINES) + '\n',
  )
  const out = new Uint8Array(head.length + tail.length + rng.int(64))
  out.set(head)
  out.set(tail, head.length)
  return out
}

const DIR_NAMES = [
  'src',
  'lib',
  'docs',
  'build',
  'gen',
  'test',
  'util',
  'vendor',
  'assets',
  'nested',
  'cache',
  'café',
  '数据',
  'Ünïcödé',
  'a',
  'a.b',
  'A',
  '_priv',
  'with space',
  '.hidden',
  '.config',
]
const BASES = [
  'index',
  'main',
  'util',
  'README',
  'notes',
  'keep',
  'trace',
  'debug',
  'root-only',
  'local-only',
  'data',
  'a',
  'a-b',
  'a_b',
  'B',
  'z',
  'résumé',
  '日本語',
  'ｆｕｌｌ',
  '😀',
  'Ångström',
  'x y',
  '~tilde',
]
const EXTS = [
  '.ts',
  '.js',
  '.md',
  '.txt',
  '.log',
  '.json',
  '.py',
  '.rs',
  '.tmp',
  '.TMP',
  '.bak',
  '',
]

/** Ignore rules sprinkled over nested directories. */
const NESTED_RULES = [
  '*.tmp',
  '!keep.tmp',
  '/local-only.md',
  '*.js\n!main.js',
  'deep/',
  'nested/*.txt',
  '!*.log',
  '**/cache/**',
  'a*.py',
  'B.*',
  '# just a comment\n\n',
  '!gen/',
  'data.*\n!data.json',
]

export interface TreeOptions {
  seed: number
  /** Number of regular files to reach (skeleton included). */
  files: number
  /** Make a `.git` directory (with `info/exclude`) at the root. */
  git: boolean
}

/** Build a tree in memory: a fixed skeleton that hits every ignore rule, plus random filler. */
export function generateTree(options: TreeOptions): GeneratedTree {
  const rng = prng(options.seed)
  const files = new Map<string, Uint8Array>()
  const symlinks = new Map<string, string>()
  const binary = new Set<string>()
  const put = (path: string, text: string) => files.set(path, enc.encode(text))

  // Root ignore files: precedence .rgignore > .ignore > .gitignore (> .git/info/exclude).
  put(
    '.gitignore',
    [
      '# root rules',
      '*.log',
      '!keep.log',
      'build/',
      '/root-only.txt',
      '**/gen/**',
      'docs/**/*.tmp',
      '*.bak',
      'secret*',
      '!secret-but-kept.md',
      'ignored-by-git.txt',
      'scratch/',
      'logs/',
      '[Tt]emp-*',
      '\\#hash.txt',
      'spaced.txt   ',
      'a/**/z.md',
      '',
    ].join('\n'),
  )
  put(
    '.ignore',
    [
      '!trace.log',
      'ignored-by-dot-ignore.md',
      '!logs/',
      'scratch/',
      'only-dot-ignore.txt',
      '',
    ].join('\n'),
  )
  put('.rgignore', ['!ignored-by-dot-ignore.md', 'trace.log', '!scratch/', ''].join('\n'))
  if (options.git) {
    put('.git/HEAD', 'ref: refs/heads/main\n')
    put('.git/config', '[core]\n\trepositoryformatversion = 0\n')
    put('.git/info/exclude', '*.excluded\n/excluded-dir/\n')
    put('.git/objects/ab/cdef', 'TODO error fooBar hidden in .git\n')
  }
  // Skeleton files, one per rule.
  const skeleton: Record<string, string> = {
    'keep.log': 'TODO keep.log is re-included by !keep.log\n',
    'debug.log': 'TODO debug.log is ignored by *.log\n',
    'trace.log': 'TODO trace.log: .ignore re-includes, .rgignore ignores again\n',
    'root-only.txt': 'TODO ignored at the root only\n',
    'sub/root-only.txt': 'TODO kept: /root-only.txt is anchored\n',
    'build/out.js': 'TODO in build/\n',
    'src/build/out.js': 'TODO in src/build/ (a directory pattern matches at any depth)\n',
    'gen/x.ts': 'TODO in gen\n',
    'src/gen/deep/y.ts': 'TODO in src/gen\n',
    'docs/a/b/c.tmp': 'TODO docs tmp\n',
    'docs/a/b/c.txt': 'TODO docs txt\n',
    'X.BAK': 'TODO upper-case BAK: ignore rules are case-sensitive\n',
    'x.bak': 'TODO lower-case bak is ignored\n',
    'secret.txt': 'TODO secret\n',
    'secret-but-kept.md': 'TODO secret but kept\n',
    'ignored-by-git.txt': 'TODO\n',
    'ignored-by-dot-ignore.md': 'TODO .ignore ignores, .rgignore re-includes\n',
    'scratch/s.txt': 'TODO scratch: three files disagree, .rgignore wins\n',
    'logs/today.txt': 'TODO logs/ ignored by .gitignore, re-included by .ignore\n',
    'logs/sub/deeper.txt': 'TODO deeper\n',
    'a.excluded': 'TODO excluded by .git/info/exclude\n',
    'excluded-dir/e.txt': 'TODO excluded dir\n',
    '.env': 'TODO=hidden\n',
    '.hidden/visible-name.txt': 'TODO inside a hidden dir\n',
    'src/.hidden.ts': 'TODO hidden file\n',
    'empty.txt': '',
    'no-newline.txt': 'TODO no trailing newline',
    'crlf.txt': 'first TODO\r\nsecond line end;\r\n\r\nfourth }\r\n',
    'bom.txt': '\uFEFFimport at the very start\nTODO\n',
    'unicode/日本語.md': '日本語のテキストです\n中文字符 汉字 漢字\nTODO 数据\n',
    'unicode/café.txt': 'café naïve résumé\nCAFÉ NAÏVE RÉSUMÉ\n',
    'unicode/😀.txt': 'emoji 😀 grin\n',
    'unicode/ｆｕｌｌ.txt': 'ＦＵＬＬ　ｗｉｄｔｈ　１２３\n',
    'unicode/z.txt': 'z\n',
    'order/a.txt': 'TODO\n',
    'order/a-b': 'TODO\n',
    'order/a/b.txt': 'TODO\n',
    'order/A.txt': 'TODO\n',
    'order/_.txt': 'TODO\n',
    'order/é.txt': 'TODO\n',
    'order/ｆ.txt': 'TODO\n',
    'order/😀.txt': 'TODO\n',
    'long/one-line.txt': 'x'.repeat(70_000) + ' needle_in_long_line TODO ' + 'y'.repeat(30_000),
    'long/two-lines.txt': 'short TODO\n' + '数据'.repeat(20_000) + ' needle_in_long_line\n',
    'meta/regex.txt': 'x = a.b*c (d) + [e] {f} ^g $h |i| ?j\na.b*c\nabbbc\n[e]\n',
    'Temp-1.txt': 'TODO character class\n',
    'temp-2.txt': 'TODO character class\n',
    'Xemp-3.txt': 'TODO kept\n',
    '#hash.txt': 'TODO escaped #\n',
    'spaced.txt': 'TODO trailing spaces of a rule are dropped\n',
    'a/z.md': 'TODO a/**/z.md matches a/z.md\n',
    'a/q/r/z.md': 'TODO and a/q/r/z.md\n',
    'x/a/z.md': 'TODO but not x/a/z.md (anchored)\n',
    'vendor/lib.js': 'TODO vendored\n',
    'vendor/deep/more.ts': 'TODO vendored deeper\n',
    'src/vendor/x.ts': 'TODO vendored at depth\n',
    'docs/vendor': 'TODO a file named vendor\n',
    'vendor.txt': 'TODO not a directory named vendor\n',
    'deep/1/2/3/4/5/leaf.ts': 'export const leaf = "TODO"\n',
  }
  for (const [path, text] of Object.entries(skeleton)) put(path, text)
  // Nested ignore files.
  put('sub/.gitignore', '*.tmp\n!keep.tmp\n/local-only.md\nnested/*.txt\n')
  put('sub/a.tmp', 'TODO tmp\n')
  put('sub/keep.tmp', 'TODO keep.tmp re-included\n')
  put('sub/local-only.md', 'TODO local only\n')
  put('sub/deeper/local-only.md', 'TODO not anchored here\n')
  put('sub/nested/n.txt', 'TODO nested txt\n')
  put('sub/nested/more/n.txt', 'TODO nested deeper txt (nested/*.txt is anchored)\n')
  put('sub/deeper/.gitignore', '!*.tmp\n')
  put('sub/deeper/b.tmp', 'TODO tmp re-included by a deeper negation\n')
  // A deeper .gitignore re-including a directory an upper one ignores.
  put('pkg/.gitignore', '!logs/\n!debug.log\n')
  put('pkg/logs/app.txt', 'TODO pkg logs re-included\n')
  put('pkg/debug.log', 'TODO pkg debug.log re-included\n')
  put('pkg/other.log', 'TODO pkg other.log still ignored\n')
  // A .ignore whitelisting a hidden entry: ripgrep then walks it.
  put('pkg/.ignore', '!.github/\n!.keep-me\n')
  put('pkg/.github/workflow.yml', 'TODO whitelisted hidden dir\n')
  put('pkg/.keep-me', 'TODO whitelisted hidden file\n')
  put('pkg/.other', 'TODO hidden, not whitelisted\n')
  // A nested repository: gitignore rules from above its root do not apply inside it.
  put('nested-repo/.git/HEAD', 'ref: refs/heads/main\n')
  put('nested-repo/.git/info/exclude', 'excluded-in-nested.txt\n')
  put('nested-repo/debug.log', 'TODO *.log from the outer repo does not apply here\n')
  put('nested-repo/excluded-in-nested.txt', 'TODO excluded by the nested repo\n')
  put('nested-repo/only-dot-ignore.txt', 'TODO .ignore rules from above still apply\n')
  put('nested-repo/build/x.txt', 'TODO build/ from the outer .gitignore does not apply\n')
  // Binary files: a NUL in the first bytes.
  for (const path of ['bin/image.png', 'bin/blob.bin', 'src/data.bin', 'build/ignored.bin']) {
    files.set(path, binaryBytes(rng))
    binary.add(path)
  }
  files.set('.hidden/hidden.bin', binaryBytes(rng))
  binary.add('.hidden/hidden.bin')

  // Random filler over nested directories.
  const dirs: string[] = ['']
  let guard = 0
  while (files.size < options.files && guard++ < options.files * 20) {
    const parent = rng.pick(dirs)
    if (parent.split('/').length < 5 && rng.chance(0.25)) {
      const dir = parent === '' ? rng.pick(DIR_NAMES) : `${parent}/${rng.pick(DIR_NAMES)}`
      if (!files.has(dir) && !dirs.includes(dir)) {
        dirs.push(dir)
        if (rng.chance(0.25))
          put(
            `${dir}/${rng.pick(['.gitignore', '.gitignore', '.ignore', '.rgignore'])}`,
            rng.pick(NESTED_RULES) + '\n',
          )
      }
      continue
    }
    const name = rng.pick(BASES) + rng.pick(EXTS)
    const path = parent === '' ? name : `${parent}/${name}`
    if (
      files.has(path) ||
      dirs.includes(path) ||
      [...files.keys()].some((f) => f.startsWith(path + '/'))
    )
      continue
    if (rng.chance(0.03)) {
      files.set(path, binaryBytes(rng))
      binary.add(path)
    } else put(path, contentText(rng))
  }
  // Symlinks: to a file and a directory inside the tree, and both kinds outside it.
  symlinks.set('link-to-file.txt', 'no-newline.txt')
  symlinks.set('link-to-dir', 'unicode')
  symlinks.set('src/link-up', '..')
  symlinks.set('dangling.txt', 'does-not-exist.txt')
  return { files, symlinks, binary }
}

/**
 * Write a tree to a fresh temp directory. Symlinks pointing outside go to a sibling directory
 * (`outside/`) holding a file and a directory full of matching text.
 */
export function writeTree(tree: GeneratedTree, prefix: string): { base: string; root: string } {
  const base = mkdtempSync(join(tmpdir(), prefix))
  const root = join(base, 'tree')
  const outside = join(base, 'outside')
  try {
    mkdirSync(join(outside, 'dir'), { recursive: true })
    writeFileSync(join(outside, 'file.txt'), 'TODO outside the tree\n')
    writeFileSync(join(outside, 'dir', 'inner.ts'), 'TODO outside the tree\n')
    mkdirSync(root)
    for (const [path, bytes] of tree.files) {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      writeFileSync(join(root, path), bytes)
    }
    for (const [path, target] of tree.symlinks) {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      symlinkSync(target, join(root, path))
    }
    symlinkSync(join(outside, 'file.txt'), join(root, 'outside-file.txt'))
    symlinkSync(join(outside, 'dir'), join(root, 'outside-dir'))
  } catch (error) {
    rmSync(base, { recursive: true, force: true })
    throw error
  }
  return { base, root }
}
