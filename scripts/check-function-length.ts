// Fails when a non-generated function in src/, adapters/ or edge/ is longer than the limit.
//
// A function a reader must hold in their head stays short: a pipeline of named steps. The limit
// counts the lines from a function's first line to its last, nested functions included (a factory
// returning an object of methods counts as one long function). Generated files (a `// generated`
// or `@generated` marker in the first lines) are skipped.
//
//   npx tsx scripts/check-function-length.ts            (LIMIT=150 by default)
//   npx tsx scripts/check-function-length.ts --list 100 (list everything over 100, exit 0)
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOTS = ['src', 'adapters', 'edge']

export interface LongFunction {
  file: string
  line: number
  name: string
  lines: number
}

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path))
    else if (/\.(ts|tsx|mts)$/.test(entry) && !entry.endsWith('.d.ts')) out.push(path)
  }
  return out
}

function isGenerated(text: string): boolean {
  return /(@generated|\/\/ generated|GENERATED)/i.test(text.slice(0, 400))
}

function functionName(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
    return node.name.getText()
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  const parent = node.parent
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText()
  }
  return '(anonymous)'
}

function longFunctionsIn(file: string, base: string, limit: number): LongFunction[] {
  const text = readFileSync(file, 'utf8')
  if (isGenerated(text)) return []
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: LongFunction[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const lines = end - start + 1
      if (lines > limit)
        found.push({ file: relative(base, file), line: start + 1, name: functionName(node), lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The functions of `root`'s src/, adapters/ and edge/ longer than `limit` lines, longest first. */
export function longFunctions(root: string, limit: number): LongFunction[] {
  const all = ROOTS.map((r) => join(root, r))
    .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true)
    .flatMap((dir) => sourceFiles(dir))
    .flatMap((file) => longFunctionsIn(file, root, limit))
  return all.sort((a, b) => b.lines - a.lines)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const listAt = process.argv.indexOf('--list')
  const limit =
    listAt >= 0 ? Number(process.argv[listAt + 1] ?? 100) : Number(process.env.LIMIT ?? 150)
  const all = longFunctions('.', limit)
  for (const f of all) console.log(`${String(f.lines).padStart(5)}  ${f.name}  ${f.file}:${f.line}`)
  if (listAt < 0 && all.length > 0) {
    console.error(`\n${all.length} function(s) over ${limit} lines: split them into named steps.`)
    process.exit(1)
  }
  if (listAt < 0) console.log(`no function over ${limit} lines in ${ROOTS.join(', ')}`)
}
