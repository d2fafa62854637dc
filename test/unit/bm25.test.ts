import { describe, expect, it } from 'vitest'
import {
  BM25_PARAMS,
  chunkLines,
  rankBm25,
  type Bm25Hit,
} from '../../src/tools/search/bm25/bm25.ts'
import { BM25_LIMITS } from '../../src/tools/search/tuning.ts'
import {
  forEachTerm,
  hasSegmenter,
  queryTerms,
  tokenize,
} from '../../src/tools/search/bm25/tokenize.ts'

const noSeg = { segmenter: false } as const
const line = (n: number, text: string) => `${String(n).padStart(6)}\t${text}`

describe('tokenize: code identifiers', () => {
  it('splits camelCase and keeps the whole identifier', () => {
    expect(tokenize('parseConfigFile')).toEqual(['parse', 'config', 'file', 'parseconfigfile'])
    expect(tokenize('getX')).toEqual(['get', 'getx'])
  })

  it('splits PascalCase with acronyms before the last capital of a capital run', () => {
    expect(tokenize('parseHTTPResponse2')).toEqual([
      'parse',
      'http',
      'response',
      '2',
      'parsehttpresponse2',
    ])
    expect(tokenize('XMLHttpRequest')).toEqual(['xml', 'http', 'request', 'xmlhttprequest'])
    expect(tokenize('IOError')).toEqual(['io', 'error', 'ioerror'])
    expect(tokenize('HTML JSON')).toEqual(['html', 'json'])
    expect(tokenize('LineWindowCollector')).toEqual([
      'line',
      'window',
      'collector',
      'linewindowcollector',
    ])
  })

  it('splits snake_case and kebab-case; the whole identifier drops the joiners', () => {
    expect(tokenize('parse_config_file')).toEqual(['parse', 'config', 'file', 'parseconfigfile'])
    expect(tokenize('MAX_RETRY_COUNT')).toEqual(['max', 'retry', 'count', 'maxretrycount'])
    expect(tokenize('parse-config-file')).toEqual(['parse', 'config', 'file', 'parseconfigfile'])
    expect(tokenize('__init__ --dry-run a - b')).toEqual(['init', 'dry', 'run', 'dryrun'])
    expect(tokenize('snake__double--dash')).toEqual(['snake', 'double', 'dash', 'snakedoubledash'])
  })

  it('separates digits from letters and keeps single digits', () => {
    expect(tokenize('utf8 sha256 404')).toEqual(['utf', '8', 'utf8', 'sha', '256', 'sha256', '404'])
    expect(tokenize('v2 i18n x86_64')).toEqual(['2', 'v2', '18', 'i18n', '86', '64', 'x8664'])
    expect(tokenize('3.14')).toEqual(['3', '14'])
  })

  it('drops one-letter words and splits on punctuation and operators', () => {
    expect(tokenize('a b c i x')).toEqual([])
    expect(tokenize("don't")).toEqual(['don'])
    expect(tokenize('obj.method(arg1,arg2)=>{x+=y}')).toEqual([
      'obj',
      'method',
      'arg',
      '1',
      'arg1',
      'arg',
      '2',
      'arg2',
    ])
    expect(tokenize('$scope @decorator #tag')).toEqual(['scope', 'decorator', 'tag'])
    expect(tokenize('')).toEqual([])
    expect(tokenize('  \t\n--__--  ')).toEqual([])
  })

  it('handles non-ASCII letters, cases and length-changing lower-casing', () => {
    expect(tokenize('ÜberDatei naïve café Straße')).toEqual([
      'über',
      'datei',
      'überdatei',
      'naïve',
      'café',
      'straße',
    ])
    expect(tokenize('ПриветМир')).toEqual(['привет', 'мир', 'приветмир'])
    expect(tokenize('ΑλφαΒήτα')).toEqual(['αλφα', 'βήτα', 'αλφαβήτα'])
    // `İ` lower-cases to two code units; terms must still be right.
    expect(tokenize('İstanbulCity x')).toEqual(['i̇stanbul', 'city', 'i̇stanbulcity'])
    expect(tokenize('İİ 中华人民共和国 İ_x')).toEqual(['i̇i̇', ...tokenize('中华人民共和国'), 'i̇x'])
    expect(tokenize('résumé—naïve…ok')).toEqual(['résumé', 'naïve', 'ok'])
  })
})

describe('tokenize: CJK', () => {
  it('makes character bigrams without the segmenter', () => {
    expect(tokenize('数据库连接池', noSeg)).toEqual(['数据', '据库', '库连', '连接', '接池'])
    expect(tokenize('库', noSeg)).toEqual(['库'])
    expect(tokenize('用 库', noSeg)).toEqual(['用', '库'])
    // CJK punctuation ends a run: no bigram across it.
    expect(tokenize('数据，连接。池', noSeg)).toEqual(['数据', '连接', '池'])
  })

  it('never joins CJK to Latin words', () => {
    expect(tokenize('foo数据bar', noSeg)).toEqual(['foo', '数据', 'bar'])
    expect(tokenize('HTTP服务器', noSeg)).toEqual(['http', '服务', '务器'])
    expect(tokenize('使用parseConfig读取', noSeg)).toEqual([
      '使用',
      'parse',
      'config',
      'parseconfig',
      '读取',
    ])
  })

  it('tokenises Japanese and Korean, keeping the prolonged sound mark in its run', () => {
    expect(tokenize('サーバー', noSeg)).toEqual(['サー', 'ーバ', 'バー'])
    expect(tokenize('データベースの設定', noSeg)).toEqual([
      'デー',
      'ータ',
      'タベ',
      'ベー',
      'ース',
      'スの',
      'の設',
      '設定',
    ])
    expect(tokenize('데이터베이스 연결', noSeg)).toEqual([
      '데이',
      '이터',
      '터베',
      '베이',
      '이스',
      '연결',
    ])
  })

  it('handles CJK outside the BMP by code point', () => {
    expect(tokenize('𠮷野家', noSeg)).toEqual(['𠮷野', '野家'])
    expect(tokenize('𠮷', noSeg)).toEqual(['𠮷'])
  })

  it('adds segmenter words of three or more characters to the bigrams where Intl.Segmenter exists', () => {
    expect(hasSegmenter()).toBe(true) // Node 20 ships full ICU
    const zh = tokenize('中华人民共和国')
    const zhBigrams = tokenize('中华人民共和国', noSeg)
    expect(zhBigrams).toEqual(['中华', '华人', '人民', '民共', '共和', '和国'])
    expect(zh.slice(0, zhBigrams.length)).toEqual(zhBigrams)
    for (const extra of zh.slice(zhBigrams.length)) expect([...extra].length).toBeGreaterThan(2)
    expect(zh).toContain('共和国')

    const ja = tokenize('データベース接続プールの設定')
    expect(ja).toContain('データベース')
    expect(ja).toContain('プール')
    expect(ja).toEqual(expect.arrayContaining(tokenize('データベース接続プールの設定', noSeg)))
    expect(tokenize('데이터베이스 연결')).toContain('데이터베이스')
    // Latin text is the same either way.
    expect(tokenize('parseHTTPResponse2')).toEqual(tokenize('parseHTTPResponse2', noSeg))
  })

  it('marks the whole identifier and segmenter words as overlay terms', () => {
    const seen: [string, boolean][] = []
    forEachTerm('getUserName データベース', (s, a, b, overlay) => {
      seen.push([s.slice(a, b), overlay])
    })
    expect(seen).toContainEqual(['getusername', true])
    expect(seen).toContainEqual(['user', false])
    expect(seen).toContainEqual(['データベース', true])
    expect(seen).toContainEqual(['デー', false])
  })
})

describe('queryTerms', () => {
  it('drops stop words and duplicates, keeping first-occurrence order', () => {
    expect(queryTerms('Where is the config file parsed? parse the CONFIG file')).toEqual([
      'config',
      'file',
      'parsed',
      'parse',
    ])
    expect(queryTerms('the of and to')).toEqual([])
    expect(queryTerms('?!')).toEqual([])
  })
})

describe('chunkLines', () => {
  it('has no chunk for an empty text and no extra chunk for a final line break', () => {
    expect(chunkLines('')).toEqual([])
    expect(chunkLines('\uFEFF')).toEqual([])
    expect(chunkLines('a')).toEqual([{ startLine: 1, endLine: 1, text: 'a' }])
    expect(chunkLines('a\n')).toEqual([{ startLine: 1, endLine: 1, text: 'a' }])
    expect(chunkLines('\n')).toEqual([{ startLine: 1, endLine: 1, text: '' }])
    expect(chunkLines('a\n\n')).toEqual([{ startLine: 1, endLine: 2, text: 'a\n' }])
    expect(chunkLines('\uFEFFa\nb')).toEqual([{ startLine: 1, endLine: 2, text: 'a\nb' }])
  })

  it('cuts 80-line chunks with 1-based inclusive line numbers', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`)
    const exact = chunkLines(lines(160).join('\n') + '\n')
    expect(exact.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 80],
      [81, 160],
    ])
    expect(exact[1]!.text).toBe(lines(160).slice(80).join('\n'))
    const more = chunkLines(lines(161).join('\n'))
    expect(more.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 80],
      [81, 160],
      [161, 161],
    ])
    expect(more[2]!.text).toBe('line 161')
    expect(chunkLines('1\n2\n3\n4\n5', 2).map((c) => c.text)).toEqual(['1\n2', '3\n4', '5'])
    expect(BM25_LIMITS.chunkLines).toBe(80)
  })

  it('keeps empty lines and CRLF line ends inside chunks', () => {
    expect(chunkLines('a\r\nb\r\n', 1)).toEqual([
      { startLine: 1, endLine: 1, text: 'a\r' },
      { startLine: 2, endLine: 2, text: 'b\r' },
    ])
    expect(chunkLines('\n\n\nx', 2)).toEqual([
      { startLine: 1, endLine: 2, text: '\n' },
      { startLine: 3, endLine: 4, text: '\nx' },
    ])
  })
})

describe('rankBm25: hand-computed scores', () => {
  /*
   * k1 = 1.2, b = 0.75. Three one-line files, one chunk each, so N = 3.
   *
   *   d1.txt "apple banana apple"     terms apple, banana, apple    dl = 3
   *   d2.txt "banana cherry"          terms banana, cherry          dl = 2
   *   d3.txt "cherry date elder fig"  terms cherry, date, elder, fig dl = 4
   *
   *   avgdl = (3 + 2 + 4) / 3 = 3
   *
   * Query "apple cherry date": df(apple) = 1, df(cherry) = 2, df(date) = 1.
   *   idf(apple) = idf(date) = ln(1 + (3 − 1 + 0.5) / (1 + 0.5)) = ln(1 + 2.5/1.5) = ln(8/3)
   *                          = 0.980829253
   *   idf(cherry)            = ln(1 + (3 − 2 + 0.5) / (2 + 0.5)) = ln(1 + 1.5/2.5) = ln(1.6)
   *                          = 0.470003629
   *
   * Length norm K = k1 · (1 − b + b · dl/avgdl):
   *   d1: 1.2 · (0.25 + 0.75 · 3/3) = 1.2
   *   d2: 1.2 · (0.25 + 0.75 · 2/3) = 0.9
   *   d3: 1.2 · (0.25 + 0.75 · 4/3) = 1.5
   *
   * score = Σ idf · tf · (k1 + 1) / (tf + K):
   *   d1: apple tf 2  → 0.980829253 · 2 · 2.2 / (2 + 1.2) = 0.980829253 · 1.375    = 1.348640
   *   d2: cherry tf 1 → 0.470003629 · 2.2 / (1 + 0.9)     = 0.470003629 · 1.157895 = 0.544215
   *   d3: cherry tf 1, date tf 1 → (0.470003629 + 0.980829253) · 2.2 / (1 + 1.5)
   *                              = 1.450832882 · 0.88                          = 1.276733
   *
   * Ranking: d1 (1.348640), d3 (1.276733), d2 (0.544215).
   */
  const docs = [
    { path: 'd2.txt', text: 'banana cherry\n' },
    { path: 'd1.txt', text: 'apple banana apple\n' },
    { path: 'd3.txt', text: 'cherry date elder fig\n' },
  ]

  it('matches the worked example to 6 decimal places', () => {
    expect(BM25_PARAMS).toEqual({ k1: 1.2, b: 0.75 })
    const hits = rankBm25(docs, 'apple cherry date', { topK: 10, context: 0 })
    expect(hits.map((h) => h.path)).toEqual(['d1.txt', 'd3.txt', 'd2.txt'])
    expect(hits[0]!.score).toBeCloseTo(1.34864, 6)
    expect(hits[1]!.score).toBeCloseTo(1.276733, 6)
    expect(hits[2]!.score).toBeCloseTo(0.544215, 6)
    expect(hits.map((h) => h.matchedTerms)).toEqual([['apple'], ['cherry', 'date'], ['cherry']])
    expect(hits[0]).toMatchObject({
      startLine: 1,
      endLine: 1,
      snippet: line(1, 'apple banana apple'),
      snippetStartLine: 1,
      snippetEndLine: 1,
    })
  })

  it('drops non-matching chunks and honours topK', () => {
    expect(rankBm25(docs, 'fig', { topK: 10, context: 0 }).map((h) => h.path)).toEqual(['d3.txt'])
    expect(rankBm25(docs, 'apple cherry date', { topK: 2, context: 0 })).toHaveLength(2)
    expect(rankBm25(docs, 'apple', { topK: 0, context: 0 })).toEqual([])
    expect(rankBm25(docs, 'zucchini', { topK: 5, context: 0 })).toEqual([])
  })

  it('returns nothing for an empty, punctuation-only or stop-word-only query', () => {
    for (const q of ['', '   ', '?!', 'the of and', 'a']) {
      expect(rankBm25(docs, q, { topK: 5, context: 2 })).toEqual([])
    }
  })
})

/** BM25 computed the slow way from forEachTerm output, to cross-check rankBm25. */
function bruteForce(docs: { path: string; text: string }[], query: string) {
  const terms = queryTerms(query)
  const chunks = docs.flatMap((d) =>
    chunkLines(d.text).map((c) => {
      const tf = new Map<string, number>()
      let dl = 0
      forEachTerm(c.text, (s, a, b, overlay) => {
        const t = s.slice(a, b)
        if (!overlay) dl++
        tf.set(t, (tf.get(t) ?? 0) + 1)
      })
      return { path: d.path, startLine: c.startLine, tf, dl }
    }),
  )
  const avgdl = chunks.reduce((a, c) => a + c.dl, 0) / chunks.length
  const { k1, b } = BM25_PARAMS
  const scores = new Map<string, number>()
  for (const c of chunks) {
    let score = 0
    for (const t of terms) {
      const f = c.tf.get(t) ?? 0
      if (f === 0) continue
      const df = chunks.filter((x) => x.tf.has(t)).length
      const idf = Math.log(1 + (chunks.length - df + 0.5) / (df + 0.5))
      score += (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * c.dl) / avgdl))
    }
    if (score > 0) scores.set(`${c.path}:${c.startLine}`, score)
  }
  return scores
}

const englishCorpus = [
  {
    path: 'src/config/parse-config-file.ts',
    text: `import { readFile } from '../fs/read-file.ts'
import { ConfigError } from './errors.ts'
import type { Config } from './types.ts'

/**
 * Parse a config file: JSON or TOML, chosen by extension. Unknown keys are rejected so that a
 * typo in the config file is reported instead of silently ignored.
 */
export async function parseConfigFile(path: string): Promise<Config> {
  const text = await readFile(path)
  const raw = path.endsWith('.toml') ? parseToml(text) : JSON.parse(text)
  return validateConfig(raw, path)
}

function validateConfig(raw: unknown, path: string): Config {
  if (typeof raw !== 'object' || raw === null) {
    throw new ConfigError(\`\${path}: the config file must hold an object\`)
  }
  return raw as Config
}
`,
  },
  {
    path: 'src/config/defaults.ts',
    text: `import type { Config } from './types.ts'

export const DEFAULT_CONFIG: Config = {
  port: 8080,
  host: 'localhost',
  logLevel: 'info',
  cacheSize: 1000,
  retries: 3,
}

export function withDefaults(config: Partial<Config>): Config {
  return { ...DEFAULT_CONFIG, ...config }
}
`,
  },
  {
    path: 'src/fs/read-file.ts',
    text: `/** Read a whole file as UTF-8 text. */
export async function readFile(path: string): Promise<string> {
  const response = await fetch(new URL(path, import.meta.url))
  if (!response.ok) throw new Error(\`cannot read file \${path}: \${response.status}\`)
  return await response.text()
}

/** Read a file and split it into lines. */
export async function readLines(path: string): Promise<string[]> {
  return (await readFile(path)).split('\\n')
}
`,
  },
  {
    path: 'src/parser/tokenizer.ts',
    text: `export type Token = { kind: 'ident' | 'number' | 'punct'; text: string; offset: number }

/** Tokenizer for the expression parser. */
export function tokenizeExpression(source: string): Token[] {
  const tokens: Token[] = []
  const re = /([A-Za-z_]\\w*)|(\\d+)|(\\S)/g
  for (const m of source.matchAll(re)) {
    const kind = m[1] ? 'ident' : m[2] ? 'number' : 'punct'
    tokens.push({ kind, text: m[0], offset: m.index ?? 0 })
  }
  return tokens
}

export function parseExpression(source: string) {
  const tokens = tokenizeExpression(source)
  return { tokens, depth: 0 }
}
`,
  },
  {
    path: 'src/cli/args.ts',
    text: `export interface CliArgs { verbose: boolean; port?: number; rest: string[] }

/** Parse command-line arguments. */
export function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { verbose: false, rest: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--verbose' || a === '-v') args.verbose = true
    else if (a === '--port') args.port = Number(argv[++i])
    else args.rest.push(a)
  }
  return args
}
`,
  },
  {
    path: 'src/http/server.ts',
    text: `import { withDefaults } from '../config/defaults.ts'

export function startServer(options: { port?: number }) {
  const settings = withDefaults(options)
  const handlers = new Map<string, (req: Request) => Promise<Response>>()
  return {
    route(path: string, handler: (req: Request) => Promise<Response>) {
      handlers.set(path, handler)
    },
    async handle(req: Request): Promise<Response> {
      const handler = handlers.get(new URL(req.url).pathname)
      return handler ? handler(req) : new Response('not found', { status: 404 })
    },
    port: settings.port,
  }
}
`,
  },
  {
    path: 'src/log/logger.ts',
    text: `export type Level = 'debug' | 'info' | 'warn' | 'error'
const ORDER: Level[] = ['debug', 'info', 'warn', 'error']

export function createLogger(level: Level) {
  const min = ORDER.indexOf(level)
  const log = (l: Level, msg: string) => {
    if (ORDER.indexOf(l) >= min) console.log(\`[\${l}] \${msg}\`)
  }
  return {
    debug: (m: string) => log('debug', m),
    info: (m: string) => log('info', m),
    warn: (m: string) => log('warn', m),
    error: (m: string) => log('error', m),
  }
}
`,
  },
  {
    path: 'src/cache/lru.ts',
    text: `/** A least-recently-used cache with a fixed capacity. */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>()
  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key)
    if (value !== undefined) {
      this.map.delete(key)
      this.map.set(key, value)
    }
    return value
  }

  set(key: K, value: V): void {
    this.map.delete(key)
    this.map.set(key, value)
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K)
  }
}
`,
  },
  {
    path: 'README.md',
    text: `# demo

A small HTTP service. Start it with \`npm start\`; it listens on port 8080.

## Configuration

Settings live in a file next to the binary. See the docs for every option. Logging goes to
standard output; set the level with \`--log-level\`.
`,
  },
  {
    path: 'src/config/types.ts',
    text: `export interface Config {
  port: number
  host: string
  logLevel: 'debug' | 'info' | 'warn' | 'error'
  cacheSize: number
  retries: number
}
`,
  },
]

const chineseCorpus = [
  {
    path: 'docs/zh/database-pool.md',
    text: `# 数据库连接池

数据库连接池负责复用数据库连接，避免每次请求都重新建立连接。
连接池的大小由 maxConnections 控制，默认是 10。
当连接池中没有空闲连接时，请求会排队等待，超过 acquireTimeout 后报错。
空闲超过 idleTimeout 的连接会被连接池关闭。
`,
  },
  {
    path: 'docs/zh/cache.md',
    text: `# 缓存

服务使用 LRU 缓存保存最近的查询结果，缓存大小由 cacheSize 控制。
缓存命中时不访问数据库。缓存在进程重启后清空。
`,
  },
  {
    path: 'docs/zh/logging.md',
    text: `# 日志

日志级别可以是 debug、info、warn 或 error。日志写到标准输出。
每条日志包含时间、级别和消息。
`,
  },
  {
    path: 'docs/zh/http.md',
    text: `# HTTP 服务

服务器默认监听 8080 端口。每个 HTTP 连接在空闲 60 秒后关闭。
请求的处理函数按路径注册。
`,
  },
  {
    path: 'docs/zh/auth.md',
    text: `# 用户认证

用户名和密码的哈希保存在数据库中。登录成功后服务器签发令牌，令牌有效期为一天。
`,
  },
  {
    path: 'docs/zh/deploy.md',
    text: `# 部署

使用容器部署服务。配置文件通过环境变量指定路径。升级时先停止旧实例，再启动新实例。
`,
  },
  {
    path: 'docs/ja/database-pool.md',
    text: `# データベース接続プール

データベース接続プールは接続を再利用します。プールのサイズは maxConnections で設定します。
`,
  },
]

describe('rankBm25: ranking', () => {
  it('puts the obvious file first for English queries', () => {
    for (const q of ['parse config file', 'parseConfigFile', 'how is the config file parsed']) {
      const hits = rankBm25(englishCorpus, q, { topK: 5, context: 1 })
      expect(hits[0]?.path, q).toBe('src/config/parse-config-file.ts')
    }
    expect(rankBm25(englishCorpus, 'lru cache', { topK: 3, context: 1 })[0]?.path).toBe(
      'src/cache/lru.ts',
    )
    expect(
      rankBm25(englishCorpus, 'command line arguments', { topK: 3, context: 1 })[0]?.path,
    ).toBe('src/cli/args.ts')
  })

  it('puts the obvious file first for Chinese and Japanese queries, with and without the segmenter', () => {
    for (const segmenter of [true, false]) {
      const zh = rankBm25(chineseCorpus, '数据库连接池', { topK: 5, context: 1, segmenter })
      expect(zh[0]?.path).toBe('docs/zh/database-pool.md')
      expect(zh[0]?.matchedTerms).toEqual(['数据', '据库', '库连', '连接', '接池'])
      const zh2 = rankBm25(chineseCorpus, '连接池 空闲连接 超时', {
        topK: 5,
        context: 1,
        segmenter,
      })
      expect(zh2[0]?.path).toBe('docs/zh/database-pool.md')
      const logs = rankBm25(chineseCorpus, '日志级别', { topK: 5, context: 1, segmenter })
      expect(logs[0]?.path).toBe('docs/zh/logging.md')
      const ja = rankBm25(chineseCorpus, 'データベース接続', { topK: 5, context: 1, segmenter })
      expect(ja[0]?.path).toBe('docs/ja/database-pool.md')
    }
  })

  it('agrees with BM25 computed the slow way', () => {
    const corpus = [...englishCorpus, ...chineseCorpus]
    for (const q of ['parse config file', 'readFile path', '数据库连接池', 'データベース接続']) {
      const expected = bruteForce(corpus, q)
      const hits = rankBm25(corpus, q, { topK: 100, context: 0 })
      expect(hits.length, q).toBe(expected.size)
      for (const h of hits) {
        expect(h.score, `${q} ${h.path}`).toBeCloseTo(expected.get(`${h.path}:${h.startLine}`)!, 9)
      }
    }
  })

  it('breaks ties by path, then start line, whatever the input order', () => {
    const body = Array.from({ length: 80 }, (_, i) => (i === 3 ? 'needle here' : `filler ${i}`))
    const text = [...body, ...body].join('\n') + '\n' // two identical chunks
    const docs = [
      { path: 'b.ts', text },
      { path: 'a/z.ts', text },
      { path: 'B.ts', text },
    ]
    const order = (hits: Bm25Hit[]) => hits.map((h) => `${h.path}:${h.startLine}`)
    const expected = ['B.ts:1', 'B.ts:81', 'a/z.ts:1', 'a/z.ts:81', 'b.ts:1', 'b.ts:81']
    expect(order(rankBm25(docs, 'needle', { topK: 10, context: 0 }))).toEqual(expected)
    expect(order(rankBm25([...docs].reverse(), 'needle', { topK: 10, context: 0 }))).toEqual(
      expected,
    )
    const scores = new Set(rankBm25(docs, 'needle', { topK: 10, context: 0 }).map((h) => h.score))
    expect(scores.size).toBe(1)
  })
})

describe('rankBm25: snippets', () => {
  const text =
    Array.from({ length: 100 }, (_, i) => {
      const n = i + 1
      return n === 5 || n === 7 || n === 15 || n === 81 ? `match ${n}` : `line ${n}`
    }).join('\n') + '\n'

  it('shows matching lines with context, merges close ranges and separates others with --', () => {
    const [hit] = rankBm25([{ path: 'f.txt', text }], 'match', { topK: 1, context: 1 })
    expect(hit).toMatchObject({
      startLine: 1,
      endLine: 80,
      snippetStartLine: 4,
      snippetEndLine: 16,
    })
    expect(hit!.snippet).toBe(
      [
        line(4, 'line 4'),
        line(5, 'match 5'),
        line(6, 'line 6'),
        line(7, 'match 7'),
        line(8, 'line 8'),
        '--',
        line(14, 'line 14'),
        line(15, 'match 15'),
        line(16, 'line 16'),
      ].join('\n'),
    )
    const [none] = rankBm25([{ path: 'f.txt', text }], 'match', { topK: 1, context: 0 })
    expect(none!.snippet).toBe(
      [line(5, 'match 5'), '--', line(7, 'match 7'), '--', line(15, 'match 15')].join('\n'),
    )
  })

  it('lets context reach outside the chunk but not outside the file', () => {
    const hits = rankBm25([{ path: 'f.txt', text }], 'match', { topK: 2, context: 2 })
    const second = hits.find((h) => h.startLine === 81)!
    expect(second).toMatchObject({ endLine: 100, snippetStartLine: 79, snippetEndLine: 83 })
    expect(second.snippet.split('\n')[0]).toBe(line(79, 'line 79'))
    const [edge] = rankBm25([{ path: 'g.txt', text: 'hit\nb\r\nhit\r\nd' }], 'hit', {
      topK: 1,
      context: 8,
    })
    expect(edge!.snippet).toBe(
      [line(1, 'hit'), line(2, 'b'), line(3, 'hit'), line(4, 'd')].join('\n'),
    )
    expect(edge).toMatchObject({ snippetStartLine: 1, snippetEndLine: 4 })
    const [bom] = rankBm25([{ path: 'h.txt', text: '\uFEFF\nx\n\nneedle\n' }], 'needle', {
      topK: 1,
      context: 8,
    })
    expect(bom!.snippet).toBe(
      [line(1, ''), line(2, 'x'), line(3, ''), line(4, 'needle')].join('\n'),
    )
  })

  it('cuts long lines like the read tool', () => {
    const long = 'needle ' + 'x'.repeat(3000)
    const [hit] = rankBm25([{ path: 'l.txt', text: long }], 'needle', { topK: 1, context: 0 })
    expect(hit!.snippet).toBe(
      line(1, long.slice(0, 2000) + ' … (line truncated at 2000 characters)'),
    )
  })
})

describe('BM25_LIMITS', () => {
  it('states the bounds of a search', () => {
    expect(BM25_LIMITS).toEqual({
      chunkLines: 80,
      maxFiles: 256,
      maxFileBytes: 512 * 1024,
      maxTotalBytes: 16 * 1024 * 1024,
    })
  })
})
