// The front matter fast path against the YAML library: over thousands of varied blocks (plain,
// quoted, lists, booleans, numbers, nulls, comments, nesting, anchors, tags, escapes, odd
// whitespace, duplicates, Unicode) it either steps aside (undefined) or gives exactly the
// library's value; where the library refuses a block, it steps aside.
import { parse } from 'yaml'
import { describe, expect, it } from 'vitest'
import { plainFrontMatter } from '../../src/skills/plain-front-matter.ts'
import { parseSkillText } from '../../src/skills/parse-skill.ts'

const KEYS = [
  'name',
  'description',
  'allowed-tools',
  'tags',
  'kind',
  'version',
  'license',
  'disable-model-invocation',
  'metadata',
  'true',
  'null',
  'a_b',
  'X',
  '1key',
  '_x',
  '__proto__',
  'constructor',
  'key with space',
  'k.dot',
  '"q"',
  '? k',
  '- item',
]
const VALUES = [
  'pdf-tools',
  'Fill and merge PDF forms.',
  'Read, Bash(git log:*)',
  'Bash(uv run x:*)',
  '[git, docs]',
  '[]',
  '[ a , b ]',
  '[a,]',
  '[a, [b]]',
  '[a: b]',
  '[a:b]',
  '["x", y]',
  '[1, 2]',
  'true',
  'True',
  'TRUE',
  'false',
  'yes',
  'no',
  'on',
  'off',
  'null',
  'Null',
  '~',
  '',
  '1',
  '1.0',
  '0x1F',
  '0o17',
  '-1',
  '+1',
  '.5',
  '.inf',
  '-.inf',
  '.nan',
  '1e3',
  '2026-01-01',
  '"quoted: yes"',
  '"esc \\n x"',
  '"a" b',
  "'single'",
  "'it''s'",
  "'bad' x'",
  '"unterminated',
  '|',
  '>-',
  '&a x',
  '*a',
  '!!str 5',
  '%x',
  '@x',
  '`x`',
  'a # comment',
  'a#b',
  'C#',
  'a: b',
  'trail:',
  'http://x.y/z',
  'a - b',
  '- x',
  '? x',
  ': x',
  '{a: 1}',
  '{}',
  'x\u00a0',
  '\u00a0x',
  'ünïcödé ✓',
  'emoji 🎉',
  'a\u2028b',
  'tab\there',
  'x ',
  '  spaced  ',
  '<<',
  '=',
  'a, b',
  'a,b',
  'back\\slash',
  "quote'in",
  'dq"in',
  '[a, "b]',
  '#x',
  'a ,b',
  'NaN',
  'Infinity',
  '0',
  '-',
  '--- x',
  '...',
]

function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** The library's reading of a block as parse-skill uses it, or 'throws'. */
function library(block: string): unknown {
  try {
    return parse(block, { maxAliasCount: 100 }) ?? {}
  } catch {
    return 'throws'
  }
}

function check(block: string): boolean {
  const fast = plainFrontMatter(block)
  const slow = library(block)
  if (fast === undefined) return false
  expect(slow, JSON.stringify(block)).not.toBe('throws')
  expect(fast, JSON.stringify(block)).toEqual(slow)
  // Same prototype and key order as the library's object.
  expect(Object.keys(fast)).toEqual(Object.keys(slow as object))
  return true
}

describe('plainFrontMatter', () => {
  it('agrees with the YAML library on every single key: value pair of the pool', () => {
    let fast = 0
    for (const key of KEYS)
      for (const value of VALUES)
        for (const sep of [': ', ':  ', ':', ': \t']) if (check(`${key}${sep}${value}`)) fast++
    expect(fast).toBeGreaterThan(50)
  })

  it('agrees on 5,000 random blocks (several lines, blank lines, CRLF, repeats)', () => {
    const r = rng(30)
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!
    let fast = 0
    for (let i = 0; i < 5000; i++) {
      const lines: string[] = []
      const n = 1 + Math.floor(r() * 6)
      for (let j = 0; j < n; j++) {
        const roll = r()
        if (roll < 0.05) lines.push('')
        else if (roll < 0.08) lines.push('  indented: x')
        else if (roll < 0.1) lines.push('# comment')
        else lines.push(`${r() < 0.8 ? pick(KEYS.slice(0, 9)) : pick(KEYS)}: ${pick(VALUES)}`)
      }
      if (check(lines.join(r() < 0.2 ? '\r\n' : '\n'))) fast++
    }
    expect(fast).toBeGreaterThan(300)
  })

  it('takes the usual SKILL.md front matter', () => {
    const usual =
      'name: release-notes\ndescription: Draft release notes from the git log.\ntags: [git, docs]\nallowed-tools: Read, Bash(git log:*)\ndisable-model-invocation: false\nlicense: MIT'
    expect(plainFrontMatter(usual)).toEqual(parse(usual))
    expect(plainFrontMatter("description: 'It''s quoted: fine'\nname: x")).toEqual({
      description: "It's quoted: fine",
      name: 'x',
    })
  })

  it('parseSkillText gives the same skill with or without the fast path', () => {
    const r = rng(7)
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!
    for (let i = 0; i < 500; i++) {
      const fm = [
        `name: skill-${i}`,
        `description: ${pick(VALUES)}`,
        `tags: ${pick(['[git, docs]', '[]', 'lint', '[a, 1]', '~'])}`,
        `allowed-tools: ${pick(['Read, Bash(git:*)', '"*"', '[Read, Write]', 'Bash(uv run x:*)'])}`,
        `kind: ${pick(['instruction', 'persona', 'tool', 'other', '"persona"'])}`,
        `disable-model-invocation: ${pick(['true', 'false', 'yes', '"true"'])}`,
      ].join('\n')
      const text = `---\n${fm}\n---\nBody ${i}\n`
      const withFast = parseSkillText(text, 'x', undefined)
      // The library alone: the same text with a comment line, which the fast path never takes.
      const slowOnly = parseSkillText(`---\n# c\n${fm}\n---\nBody ${i}\n`, 'x', undefined)
      // (The comment shifts the line numbers of a parse error by one.)
      const same = (p: typeof withFast) =>
        p.ok ? p : { ok: false, message: p.message.replace(/line \d+/g, 'line N') }
      expect(same(withFast), fm).toEqual(same(slowOnly))
    }
  })
})
