// Build-time (Node) side of the demo's sample project: the files of examples/sample-project, the
// project `npm start` serves, plus a `.git` holding one commit of them, as the virtual module
// `virtual:sample-project`. The in-tab workspace is seeded from it on a first visit and by
// "Reset sample", without loading isomorphic-git in the page.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import * as fs from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import git from 'isomorphic-git'
import type { Plugin } from 'vite'

const MODULE_ID = 'virtual:sample-project'
const RESOLVED_ID = `\0${MODULE_ID}`
/** The same author and a fixed date, so every build makes the same commit id. */
const AUTHOR = { name: 'isoagent', email: 'isoagent@localhost', timestamp: 1_767_225_600 }

/** examples/sample-project, the project `npm start` copies and serves. */
export const SAMPLE_PROJECT_DIR = fileURLToPath(
  new URL('../examples/sample-project', import.meta.url),
)

/** One file of the sample: its workspace path and its bytes as base64. */
export interface SampleFileEntry {
  path: string
  base64: string
}

/** Every file under `dir`, paths relative to it with `/`, sorted. */
function walk(dir: string, root = dir): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) out.push(...walk(full, root))
    else out.push(relative(root, full).split(sep).join('/'))
  }
  return out
}

/** A `.git` worth keeping: the repository itself, not hooks or descriptions. */
const kept = (path: string) =>
  !path.startsWith('.git/') ||
  path === '.git/HEAD' ||
  path === '.git/config' ||
  path === '.git/index' ||
  path.startsWith('.git/refs/') ||
  path.startsWith('.git/objects/')

/** The sample's files and a `.git` with one commit of them ("sample project" on `main`). */
export async function sampleProjectFiles(source = SAMPLE_PROJECT_DIR): Promise<SampleFileEntry[]> {
  const dir = mkdtempSync(join(tmpdir(), 'isoagent-sample-'))
  try {
    cpSync(source, dir, { recursive: true })
    await git.init({ fs, dir, defaultBranch: 'main' })
    await git.add({ fs, dir, filepath: '.' })
    await git.commit({
      fs,
      dir,
      message: 'sample project',
      author: { ...AUTHOR, timezoneOffset: 0 },
      committer: { ...AUTHOR, timezoneOffset: 0 },
    })
    return walk(dir)
      .filter(kept)
      .map((path) => ({ path, base64: readFileSync(join(dir, path)).toString('base64') }))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The Vite plugin serving `virtual:sample-project` (`export default` the file list). */
export function sampleProjectPlugin(): Plugin {
  return {
    name: 'isoagent-sample-project',
    resolveId: (id) => (id === MODULE_ID ? RESOLVED_ID : undefined),
    async load(id) {
      if (id !== RESOLVED_ID) return undefined
      for (const path of walk(SAMPLE_PROJECT_DIR)) this.addWatchFile(join(SAMPLE_PROJECT_DIR, path))
      return `export default ${JSON.stringify(await sampleProjectFiles())}\n`
    },
  }
}
