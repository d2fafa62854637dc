// A deterministic, source-like file tree for bench/search.ts: ≥ 30,000 files and ≥ 400 MB,
// generated once into .bench-data/search-tree/ (gitignored) and reused while its marker names the
// current generator version.
//
// Layout (paths relative to the tree root):
//   packages/pNN/{src,test,lib,docs,scripts}/…   nested source: .ts .js .rs .py .go .md .json
//   vendor/libNNN/dist/…                         large bundled files (80 KB – 1.4 MB)
//   packages/pNN/build/, coverage/, *.log         ignored by .gitignore files (a few re-included)
//   .cache/, packages/pNN/.turbo/, .env           hidden: skipped by every tool
//   assets/…/*.png                                binary (NUL bytes in the first 8 KiB)
// Text is ASCII identifiers with CJK in comments, strings and docs, varied line lengths (blank
// lines, 1–2000-character lines, a few minified 20 KB lines in vendor bundles).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'

/** Bump when the generator's output changes: a tree with another version is regenerated. */
export const SEARCH_TREE_VERSION = 3
const SEED = 0x5eed_2026

/** Where the tree lives, relative to the repository root. */
export const SEARCH_TREE_DIR = '.bench-data/search-tree'
const MARKER = '.bench-data/search-tree.json'

/** Number of packages and of source files per package. */
const PACKAGES = 48
const FILES_PER_PACKAGE = 660
/** Vendor bundles. */
const VENDOR_LIBS = 40
const FILES_PER_LIB = 5

/** Rare marker lines, for a grep with few results. */
export const RARE_LITERAL = 'XYZZY_SENTINEL'

export interface SearchTree {
  /** Absolute path of the tree root. */
  root: string
  /** All files written (visible, ignored, hidden and binary). */
  files: number
  bytes: number
  /** Files neither hidden nor ignored nor binary: what a search walks and reads as text. */
  searchableFiles: number
  searchableBytes: number
  version: number
  /** Set when this run generated the tree. */
  generatedMs?: number
}

/** mulberry32: a small, fast, seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = (
  'request response handler cache token buffer stream parse render update delete create ' +
  'session user account config option value result error status message event listener ' +
  'queue worker task job schedule retry timeout deadline budget limit page cursor index ' +
  'search query match filter sort order group batch chunk block line file path dir tree ' +
  'node edge graph vertex weight score rank term document field record entry key map set ' +
  'list array item element child parent root leaf branch commit merge diff patch hunk ' +
  'client server socket packet frame header body payload encode decode serialize hash ' +
  'digest sign verify crypto secret policy permission role scope grant audit log trace ' +
  'metric counter gauge histogram sample window buffer offset length size count total ' +
  'start stop begin end open close read write flush sync async await promise future'
).split(/\s+/)
const TYPES = [
  'string',
  'number',
  'boolean',
  'Uint8Array',
  'Request',
  'Response',
  'Session',
  'Config',
  'Record<string, unknown>',
  'Map<string, number>',
  'Promise<void>',
  'ReadonlyArray<Entry>',
]
const CJK = [
  '处理请求并返回结果',
  '缓存未命中时重新加载',
  '注意：这里的顺序很重要',
  '检索文件并计算得分',
  'ユーザーのセッションを更新する',
  'キャッシュを無効化します',
  '오류가 발생하면 다시 시도합니다',
  '配置项的默认值',
  '边界情况：空输入',
  '日志级别为调试时输出',
]

/** Line generator for one language, driven by the shared PRNG. */
class TextGen {
  constructor(readonly rand: () => number) {}

  int(n: number): number {
    return Math.floor(this.rand() * n)
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!
  }
  word(): string {
    return this.pick(WORDS)
  }
  camel(parts = 1 + this.int(3)): string {
    let s = this.word()
    for (let i = 1; i < parts; i++) {
      const w = this.word()
      s += w[0]!.toUpperCase() + w.slice(1)
    }
    return s
  }
  pascal(): string {
    const c = this.camel()
    return c[0]!.toUpperCase() + c.slice(1)
  }
  snake(parts = 1 + this.int(3)): string {
    const out: string[] = []
    for (let i = 0; i < parts; i++) out.push(this.word())
    return out.join('_')
  }
  words(n: number): string {
    const out: string[] = []
    for (let i = 0; i < n; i++) out.push(this.word())
    return out.join(' ')
  }
  /** A comment body: words, sometimes CJK, rarely a TODO/FIXME or the rare marker. */
  commentText(): string {
    const r = this.rand()
    if (r < 0.00012) return `${RARE_LITERAL} ${this.words(3)}`
    if (r < 0.12) return this.pick(CJK) + (this.rand() < 0.5 ? ` (${this.words(2)})` : '')
    if (r < 0.16) return `TODO(${this.word()}): ${this.words(3 + this.int(8))}`
    if (r < 0.18) return `FIXME: ${this.words(2 + this.int(6))}`
    return this.words(2 + this.int(14))
  }
  indent(depth: number): string {
    return '  '.repeat(depth)
  }

  tsLine(depth: number): string {
    const ind = this.indent(depth)
    const r = this.rand()
    if (r < 0.1) return ''
    if (r < 0.2) return `${ind}// ${this.commentText()}`
    if (r < 0.3)
      return `${ind}const ${this.camel()} = await ${this.camel()}.${this.camel()}(${this.camel()}, '${this.word()}')`
    if (r < 0.38)
      return `${ind}if (${this.camel()} === undefined) return ${this.pick(['null', 'undefined', '[]', 'false'])}`
    if (r < 0.46)
      return `${ind}${this.camel()}.${this.camel()} = ${this.camel()}(${this.int(1000)}, ${this.camel()})`
    if (r < 0.52)
      return `${ind}export function ${this.camel()}${this.pick(['Handler', 'Factory', 'Impl', ''])}(${this.camel()}: ${this.pick(TYPES)}, ${this.camel()}: ${this.pick(TYPES)}): ${this.pick(TYPES)} {`
    if (r < 0.58)
      return `${ind}return { ${this.camel()}, ${this.camel()}: ${this.camel()}.${this.word()}, ${this.word()}: ${this.int(100)} }`
    if (r < 0.63)
      return `${ind}throw new ${this.pascal()}Error(\`${this.words(3)} \${${this.camel()}}\`)`
    if (r < 0.68)
      return `${ind}logger.${this.pick(['info', 'warn', 'debug', 'error'])}('${this.rand() < 0.3 ? this.pick(CJK) : this.words(4)}', { ${this.camel()} })`
    if (r < 0.72)
      return `${ind}import { ${this.pascal()}, ${this.camel()} } from '../${this.word()}/${this.camel()}.ts'`
    if (r < 0.75) return `${ind}requestId = ${this.camel()}.requestId ?? crypto.randomUUID()`
    if (r < 0.77) {
      const items: string[] = []
      const n = 10 + this.int(90)
      for (let i = 0; i < n; i++)
        items.push(this.rand() < 0.5 ? String(this.int(65536)) : `'${this.word()}'`)
      return `${ind}const ${this.camel()}Table = [${items.join(', ')}]`
    }
    if (r < 0.8) return `${ind}}`
    if (r < 0.84)
      return `${ind}for (const ${this.word()} of ${this.camel()}.${this.word()}s) ${this.camel()}(${this.word()})`
    if (r < 0.88) return `${ind}// ${this.commentText()}`
    if (r < 0.92)
      return `${ind}let ${this.camel()}: ${this.pick(TYPES)} = ${this.camel()}Cache.get(${this.camel()}) ?? ${this.int(100)}`
    if (r < 0.96) return `${ind}await ${this.camel()}Handler(${this.camel()}, ${this.camel()})`
    return `${ind}${this.camel()}(${this.camel()})`
  }

  rsLine(depth: number): string {
    const ind = this.indent(depth * 2)
    const r = this.rand()
    if (r < 0.1) return ''
    if (r < 0.2) return `${ind}// ${this.commentText()}`
    if (r < 0.28)
      return `${ind}${this.pick(['pub ', '', 'pub(crate) ', 'async '])}fn ${this.rand() < 0.4 ? this.camel() + 'Handler' : this.snake()}(${this.snake(1)}: &${this.pick(['str', 'mut Vec<u8>', 'Request', 'Config'])}) -> Result<${this.pascal()}, Error> {`
    if (r < 0.42)
      return `${ind}let ${this.rand() < 0.3 ? 'mut ' : ''}${this.snake()} = ${this.snake()}.${this.snake(1)}(${this.snake(1)})?;`
    if (r < 0.5)
      return `${ind}if ${this.snake()}.is_empty() { return Ok(${this.pascal()}::default()); }`
    if (r < 0.58)
      return `${ind}match ${this.snake()} { ${this.pascal()}::${this.pascal()} => ${this.snake()}(), _ => {} }`
    if (r < 0.64)
      return `${ind}${this.pick(['tracing::info', 'log::debug', 'eprintln'])}!("${this.rand() < 0.3 ? this.pick(CJK) : this.words(4)} {}", ${this.snake()});`
    if (r < 0.7) return `${ind}}`
    if (r < 0.76) return `${ind}/// ${this.commentText()}`
    if (r < 0.8) return `${ind}use crate::${this.snake(1)}::{${this.pascal()}, ${this.pascal()}};`
    return `${ind}${this.snake()}.${this.snake(1)}(&${this.snake()}, ${this.int(4096)});`
  }

  pyLine(depth: number): string {
    const ind = '    '.repeat(depth)
    const r = this.rand()
    if (r < 0.12) return ''
    if (r < 0.22) return `${ind}# ${this.commentText()}`
    if (r < 0.3)
      return `${ind}def ${this.snake()}(self, ${this.snake(1)}: ${this.pick(['str', 'int', 'bytes', 'dict'])} = None) -> ${this.pick(['str', 'None', 'list', 'bool'])}:`
    if (r < 0.45)
      return `${ind}${this.snake()} = self.${this.snake()}(${this.snake(1)}, ${this.int(100)})`
    if (r < 0.55) return `${ind}if ${this.snake()} is None:`
    if (r < 0.62) return `${ind}return ${this.snake()}`
    if (r < 0.7)
      return `${ind}logger.${this.pick(['info', 'debug'])}("${this.rand() < 0.3 ? this.pick(CJK) : this.words(4)}: %s", ${this.snake()})`
    if (r < 0.75) return `${ind}"""${this.commentText()}"""`
    if (r < 0.8)
      return `${ind}from ${this.snake(1)}.${this.snake(1)} import ${this.pascal()}, ${this.snake()}`
    return `${ind}for ${this.snake(1)} in ${this.snake()}: ${this.snake()}.append(${this.snake(1)})`
  }

  goLine(depth: number): string {
    const ind = '\t'.repeat(depth)
    const r = this.rand()
    if (r < 0.1) return ''
    if (r < 0.2) return `${ind}// ${this.commentText()}`
    if (r < 0.26)
      return `func (s *${this.pascal()}) ${this.pascal()}${this.pick(['Handler', ''])}(w http.ResponseWriter, r *http.Request) {`
    if (r < 0.4)
      return `${ind}${this.camel()}, err := ${this.camel()}.${this.pascal()}(ctx, ${this.camel()})`
    if (r < 0.5)
      return `${ind}if err != nil {\n${ind}\treturn fmt.Errorf("${this.words(3)}: %w", err)\n${ind}}`
    if (r < 0.58) return `${ind}}`
    if (r < 0.64)
      return `${ind}log.Printf("${this.rand() < 0.3 ? this.pick(CJK) : this.words(4)} %v", ${this.camel()})`
    return `${ind}${this.camel()}.${this.pascal()}(${this.camel()}, ${this.int(256)})`
  }

  mdLine(): string {
    const r = this.rand()
    if (r < 0.15) return ''
    if (r < 0.2) return `${'#'.repeat(1 + this.int(3))} ${this.pascal()} ${this.words(2)}`
    if (r < 0.35) return this.pick(CJK) + '。' + this.pick(CJK) + '。' + this.pick(CJK) + '。'
    if (r < 0.45) return `- ${this.commentText()}`
    if (r < 0.5) return '    ' + this.tsLine(0)
    const s = this.words(8 + this.int(40))
    return s[0]!.toUpperCase() + s.slice(1) + '.'
  }
}

type Lang = 'ts' | 'js' | 'rs' | 'py' | 'go' | 'md' | 'json'

function fileText(gen: TextGen, lang: Lang, targetBytes: number): string {
  const parts: string[] = []
  let size = 0
  let depth = 0
  if (lang === 'json') {
    parts.push('{')
    while (size < targetBytes) {
      const line = `  "${gen.camel()}": ${gen.rand() < 0.5 ? `"${gen.rand() < 0.2 ? gen.pick(CJK) : gen.words(1 + gen.int(4))}"` : gen.int(100000)},`
      parts.push(line)
      size += line.length + 1
    }
    parts.push(`  "version": "${gen.int(10)}.${gen.int(30)}.${gen.int(50)}"`, '}')
    return parts.join('\n') + '\n'
  }
  while (size < targetBytes) {
    let line: string
    switch (lang) {
      case 'ts':
      case 'js':
        line = gen.tsLine(depth)
        break
      case 'rs':
        line = gen.rsLine(depth)
        break
      case 'py':
        line = gen.pyLine(depth)
        break
      case 'go':
        line = gen.goLine(depth)
        break
      default:
        line = gen.mdLine()
    }
    if (line.endsWith('{') || line.endsWith(':')) depth = Math.min(depth + 1, 6)
    else if (line.trimStart() === '}') depth = Math.max(depth - 1, 0)
    parts.push(line)
    size += line.length + 1
  }
  return parts.join('\n') + '\n'
}

/** A minified-bundle-like line of about `chars` characters. */
function minifiedLine(gen: TextGen, chars: number): string {
  const parts: string[] = []
  let size = 0
  while (size < chars) {
    const p = `function ${gen.camel()}(a,b){return a.${gen.word()}(b,${gen.int(99)})||"${gen.word()}"};`
    parts.push(p)
    size += p.length
  }
  return parts.join('')
}

const EXT: Record<Lang, string> = {
  ts: 'ts',
  js: 'js',
  rs: 'rs',
  py: 'py',
  go: 'go',
  md: 'md',
  json: 'json',
}
const LANGS: readonly Lang[] = ['ts', 'ts', 'ts', 'ts', 'js', 'js', 'rs', 'py', 'go', 'md', 'json']

/** Size of a package source file: mostly small, a tail of medium and a few large. */
function sourceSize(rand: () => number): number {
  const r = rand()
  if (r < 0.78) return 400 + Math.floor(rand() * 9000)
  if (r < 0.97) return 9000 + Math.floor(rand() * 21000)
  return 60000 + Math.floor(rand() * 120000)
}

interface Writer {
  write(rel: string, data: string | Uint8Array, searchable: boolean): void
}

function generate(writer: Writer): void {
  const rand = prng(SEED)
  const gen = new TextGen(rand)

  writer.write('.gitignore', 'build/\ncoverage/\n*.log\n/tmp/\n', false)
  writer.write('README.md', fileText(gen, 'md', 6000), true)
  writer.write('.env', 'SECRET_TOKEN=requestId-should-not-be-found\n', false)
  for (let i = 0; i < 40; i++)
    writer.write(`.cache/blob${i}.ts`, fileText(gen, 'ts', 4000 + gen.int(8000)), false)
  for (let i = 0; i < 8; i++) writer.write(`tmp/scratch${i}.ts`, fileText(gen, 'ts', 3000), false)

  const dirNames = ['core', 'util', 'net', 'store', 'api', 'ui', 'io', 'auth', 'cli', 'plugins']
  for (let p = 0; p < PACKAGES; p++) {
    const pkg = `packages/p${String(p).padStart(2, '0')}`
    writer.write(`${pkg}/package.json`, fileText(gen, 'json', 600), true)
    writer.write(`${pkg}/README.md`, fileText(gen, 'md', 2000 + gen.int(6000)), true)
    if (p % 4 === 0) {
      // Re-include one log file; ignore a generated directory.
      writer.write(`${pkg}/.gitignore`, 'generated/\n!keep.log\n', false)
      writer.write(`${pkg}/keep.log`, fileText(gen, 'md', 3000), true)
      for (let i = 0; i < 10; i++)
        writer.write(`${pkg}/src/generated/gen${i}.ts`, fileText(gen, 'ts', 5000), false)
    }
    if (p % 3 === 0) {
      for (let i = 0; i < 12; i++)
        writer.write(`${pkg}/build/chunk${i}.js`, fileText(gen, 'js', 4000 + gen.int(20000)), false)
      writer.write(`${pkg}/debug.log`, fileText(gen, 'md', 4000), false)
    }
    if (p % 5 === 0) {
      for (let i = 0; i < 6; i++)
        writer.write(`${pkg}/.turbo/cache${i}.json`, fileText(gen, 'json', 2000), false)
    }
    for (let f = 0; f < FILES_PER_PACKAGE; f++) {
      const top = gen.pick(['src', 'src', 'src', 'src', 'test', 'lib', 'docs', 'scripts'])
      const depth = 1 + gen.int(4)
      const segments = [pkg, top]
      for (let d = 1; d < depth; d++) segments.push(gen.pick(dirNames) + (d > 1 ? gen.int(4) : ''))
      const lang: Lang = top === 'docs' ? 'md' : gen.pick(LANGS)
      const name = `${gen.camel(1 + gen.int(2))}${f}.${top === 'test' && lang === 'ts' ? 'test.' : ''}${EXT[lang]}`
      writer.write([...segments, name].join('/'), fileText(gen, lang, sourceSize(rand)), true)
    }
    // A few binary files (NUL bytes early).
    for (let i = 0; i < 4; i++) {
      const bytes = new Uint8Array(2048 + gen.int(30000))
      for (let k = 0; k < bytes.length; k++) bytes[k] = gen.int(256)
      bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d], 0)
      writer.write(`assets/${pkg.slice(9)}/icon${i}.png`, bytes, false)
    }
  }

  for (let l = 0; l < VENDOR_LIBS; l++) {
    const lib = `vendor/lib${String(l).padStart(3, '0')}`
    writer.write(`${lib}/package.json`, fileText(gen, 'json', 800), true)
    for (let f = 0; f < FILES_PER_LIB; f++) {
      // One bundle per library over 1 MiB (streamed in blocks by grep), the rest 80–480 KB.
      const size =
        f === 1 ? 1_050_000 + Math.floor(rand() * 350_000) : 80_000 + Math.floor(rand() * 400_000)
      let text = fileText(gen, 'js', size)
      if (f === 0) text = minifiedLine(gen, 20_000) + '\n' + text
      writer.write(`${lib}/dist/${gen.camel(2)}.${f}.js`, text, true)
    }
  }
}

function readMarker(repoRoot: string): SearchTree | undefined {
  try {
    const marker = JSON.parse(readFileSync(nodePath.join(repoRoot, MARKER), 'utf8')) as SearchTree
    return marker.version === SEARCH_TREE_VERSION ? marker : undefined
  } catch {
    return undefined
  }
}

/**
 * The benchmark tree under `repoRoot`: reused when its marker names {@link SEARCH_TREE_VERSION},
 * else (re)generated, which takes some seconds. The marker is written last, so an interrupted
 * generation is redone.
 */
export function ensureSearchTree(repoRoot: string): SearchTree {
  const root = nodePath.join(repoRoot, SEARCH_TREE_DIR)
  const existing = readMarker(repoRoot)
  if (existing !== undefined) return { ...existing, root }
  const start = performance.now()
  rmSync(root, { recursive: true, force: true })
  const made = new Set<string>()
  const tree: SearchTree = {
    root,
    files: 0,
    bytes: 0,
    searchableFiles: 0,
    searchableBytes: 0,
    version: SEARCH_TREE_VERSION,
  }
  generate({
    write(rel, data, searchable) {
      const abs = nodePath.join(root, rel)
      const dir = nodePath.dirname(abs)
      if (!made.has(dir)) {
        mkdirSync(dir, { recursive: true })
        made.add(dir)
      }
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
      writeFileSync(abs, bytes)
      tree.files++
      tree.bytes += bytes.length
      if (searchable) {
        tree.searchableFiles++
        tree.searchableBytes += bytes.length
      }
    },
  })
  tree.generatedMs = performance.now() - start
  const { root: _root, generatedMs: _ms, ...marker } = tree
  writeFileSync(nodePath.join(repoRoot, MARKER), JSON.stringify(marker, null, 2) + '\n')
  return tree
}
