import { dirname, relative, resolve, sep } from 'node:path'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/**
 * The parts of the repository each part must not import, whatever the relative depth: an import
 * is resolved against the importing file and judged by the top-level folder it lands in.
 */
const FORBIDDEN_PARTS = {
  src: ['adapters', 'edge', 'web-demo', 'bench', 'test', 'bin', 'scripts'],
  adapters: ['edge', 'web-demo', 'bench', 'test', 'bin', 'scripts'],
  edge: ['web-demo', 'bench', 'test', 'bin', 'scripts'],
}
/**
 * Inside a part, the sub-parts each sub-part must not import: `edge/http/` and `edge/mcp/` (and
 * the two package entries at `edge/`'s root) run on Node and Workers alike, so none of them
 * reaches into `edge/cloudflare/` (the Worker, its bindings, Durable Objects); `edge/mcp/` stands
 * on its own (the HTTP app mounts it, not the other way round).
 */
const FORBIDDEN_SUBPARTS = {
  'edge/http': ['edge/cloudflare'],
  'edge/mcp': ['edge/cloudflare', 'edge/http'],
  'edge/': ['edge/cloudflare'],
}
const PACKAGE_NAME = 'isoagent'

const partOf = (cwd, path) => {
  const rel = relative(cwd, path)
  return rel.startsWith('..') ? undefined : rel.split(sep)[0]
}

/**
 * The sub-part of `part` a path is in: `edge/http` for `edge/http/app.ts`, `edge/` for a file at
 * `edge/`'s root; undefined for parts without sub-parts.
 */
const subPartOf = (cwd, path) => {
  const segments = relative(cwd, path).split(sep)
  if (segments[0] !== 'edge') return undefined
  return segments.length > 2 ? `edge/${segments[1]}` : 'edge/'
}

/** `isoagent/part-boundaries`: no import from a part into one it must not depend on. */
const partBoundaries = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      forbidden: '{{from}}/ must not import {{to}}/ ("{{specifier}}").',
      selfReference: '{{from}}/ must not import the package by its own name ("{{specifier}}").',
    },
  },
  create(context) {
    const from = partOf(context.cwd, context.filename)
    const forbidden = FORBIDDEN_PARTS[from]
    if (!forbidden) return {}
    const fromSub = subPartOf(context.cwd, context.filename)
    const forbiddenSubs = FORBIDDEN_SUBPARTS[fromSub] ?? []
    const check = (node) => {
      const specifier =
        node?.type === 'Literal'
          ? node.value
          : node?.type === 'TemplateLiteral' && node.expressions.length === 0
            ? node.quasis[0].value.cooked
            : undefined
      if (typeof specifier !== 'string') return
      if (specifier === PACKAGE_NAME || specifier.startsWith(`${PACKAGE_NAME}/`)) {
        context.report({ node, messageId: 'selfReference', data: { from, specifier } })
        return
      }
      if (!specifier.startsWith('.') && !specifier.startsWith('/')) return
      const target = resolve(dirname(context.filename), specifier)
      const to = partOf(context.cwd, target)
      if (to !== undefined && forbidden.includes(to))
        context.report({ node, messageId: 'forbidden', data: { from, to, specifier } })
      const toSub = subPartOf(context.cwd, target)
      if (toSub !== undefined && toSub !== fromSub && forbiddenSubs.includes(toSub))
        context.report({
          node,
          messageId: 'forbidden',
          data: { from: fromSub.replace(/\/$/, ''), to: toSub, specifier },
        })
    }
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.source ?? node.argument?.literal),
      TSExternalModuleReference: (node) => check(node.expression),
    }
  },
}

const NODE_BUILTINS = [
  'fs',
  'path',
  'os',
  'child_process',
  'crypto',
  'stream',
  'buffer',
  'util',
  'url',
  'http',
  'https',
  'net',
]

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-worker/**',
      '.wrangler/**',
      'node_modules/**',
      '.bench-data/**',
      'coverage/**',
      'src/kernel/validators.generated.ts',
      'web-demo/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        URL: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
      },
    },
    plugins: { isoagent: { rules: { 'part-boundaries': partBoundaries } } },
    rules: {
      'isoagent/part-boundaries': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // The core is Web-standard only: it must run unchanged in Node, workerd and Chromium.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          // `paths` match a module name exactly; `patterns` with a slash are anchored, so
          // `net/*` catches `net/x` while a relative `../net/...` import passes.
          paths: NODE_BUILTINS.map((name) => ({
            name,
            message: 'src/ is Web-standard only: no Node built-ins.',
          })),
          patterns: [
            { group: ['node:*'], message: 'src/ is Web-standard only: no node:* imports.' },
            {
              group: NODE_BUILTINS.map((name) => `${name}/*`),
              message: 'src/ is Web-standard only: no Node built-ins.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'src/ is Web-standard only: no process.' },
        { name: 'Buffer', message: 'src/ is Web-standard only: use Uint8Array.' },
        { name: 'require', message: 'src/ is ESM and Web-standard only.' },
        { name: '__dirname', message: 'src/ is Web-standard only.' },
        { name: '__filename', message: 'src/ is Web-standard only.' },
        { name: 'global', message: 'src/ is Web-standard only: use globalThis.' },
        { name: 'window', message: 'src/ uses no DOM.' },
        { name: 'document', message: 'src/ uses no DOM.' },
      ],
    },
  },
)
