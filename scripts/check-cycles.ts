/**
 * Fails when the relative imports of the shipped code form a cycle, between files or between the
 * folders of a part (`src/kernel` ⇄ `src/tools`). Every import counts: static, type-only,
 * re-exports and dynamic `import()`. Run by `npm run lint`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** The parts whose imports must form no cycle. */
export const CHECKED_DIRS = ['src', 'adapters', 'edge', 'bin', 'web-demo']

/** An import cycle: the files (or folders) in import order, the first repeated at the end. */
export interface ImportCycle {
  kind: 'file' | 'folder'
  path: string[]
  /** For a folder cycle, one import that makes each arrow (`from -> to`). */
  via: string[]
}

const SOURCE = /\.(ts|mts|js|mjs)$/

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(path)
    return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  const base = resolve(dirname(from), specifier)
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    join(base, 'index.ts'),
  ]
  return candidates.find((path) => existsSync(path) && statSync(path).isFile())
}

/** Tarjan's strongly connected components; one concrete cycle through each that has one. */
function cyclesOf(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (node: string): void => {
    const own = index.size
    index.set(node, own)
    low.set(node, own)
    stack.push(node)
    onStack.add(node)
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) !== own) return
    const component = new Set<string>()
    let top: string
    do {
      top = stack.pop()!
      onStack.delete(top)
      component.add(top)
    } while (top !== node)
    if (component.size > 1 || edges.get(node)?.includes(node))
      cycles.push(shortestCycle(node, component, edges))
  }
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node)
  return cycles
}

function shortestCycle(start: string, within: Set<string>, edges: Map<string, string[]>): string[] {
  const previous = new Map<string, string>()
  const queue = [start]
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!
    for (const next of edges.get(node) ?? []) {
      if (next === start) {
        const path = [node]
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!)
        return [...path, start]
      }
      if (within.has(next) && !previous.has(next)) {
        previous.set(next, node)
        queue.push(next)
      }
    }
  }
  return [start, start]
}

/** The folder a file belongs to: `src/kernel` for `src/kernel/x/y.ts`; a part's own files alone. */
function folderOf(file: string): string {
  const parts = file.split('/')
  return parts.length > 2 ? parts.slice(0, 2).join('/') : file
}

const unitsKey = (units: string[]) => [...new Set(units)].sort().join('\0')

/** Each import cycle among the files under `dirs` of `root`, with paths relative to `root`. */
export function findCycles(root: string, dirs: readonly string[] = CHECKED_DIRS): ImportCycle[] {
  const name = (path: string) => relative(root, path).split(sep).join('/')
  const files = new Map<string, string[]>()
  for (const file of dirs.flatMap((dir) => sourceFiles(join(root, dir)))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    const targets = importedFiles.flatMap((ref) => resolveImport(file, ref.fileName) ?? [])
    files.set(name(file), [...new Set(targets.map(name))])
  }
  const folders = new Map<string, string[]>()
  const example = new Map<string, string>()
  for (const [file, targets] of files) {
    for (const target of targets) {
      const [from, to] = [folderOf(file), folderOf(target)]
      if (from === to) continue
      folders.set(from, [...new Set([...(folders.get(from) ?? []), to])])
      if (!example.has(`${from}\0${to}`)) example.set(`${from}\0${to}`, `${file} -> ${target}`)
    }
  }
  const fileCycles = cyclesOf(files).map((path): ImportCycle => ({ kind: 'file', path, via: [] }))
  // A folder cycle that only retraces a file cycle's folders says nothing more.
  const retraced = new Set(fileCycles.map((cycle) => unitsKey(cycle.path.map(folderOf))))
  const folderCycles = cyclesOf(folders)
    .filter((path) => !retraced.has(unitsKey(path)))
    .map((path): ImportCycle => {
      const via = path.slice(1).map((to, i) => example.get(`${path[i]}\0${to}`)!)
      return { kind: 'folder', path, via }
    })
  return [...fileCycles, ...folderCycles]
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
  const cycles = findCycles(root)
  for (const cycle of cycles) {
    console.error(`import cycle between ${cycle.kind}s: ${cycle.path.join(' -> ')}`)
    for (const step of cycle.via) console.error(`  ${step}`)
  }
  if (cycles.length > 0) process.exit(1)
  const checked = CHECKED_DIRS.filter((dir) => existsSync(join(root, dir)))
  console.log(`no import cycles in ${checked.join(', ')}`)
}
