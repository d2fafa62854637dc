// `npm run demo`: a guided run of the isoagent CLI against this repository itself.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const cli = fileURLToPath(new URL('./isoagent.mjs', import.meta.url))

const steps = [
  ['The tools a local-disk session offers', ['tools']],
  ['Read the first lines of README.md', ['call', 'read', '{"file_path":"README.md","limit":8}']],
  ['List src/', ['call', 'ls', '{"path":"src"}']],
  [
    'Two files in one read, sharing an output budget',
    [
      'call',
      'read',
      '{"files":[{"path":"package.json","limit":3},{"path":"tsconfig.json","limit":3}]}',
    ],
  ],
  [
    'A dry-run edit: the diff, nothing written',
    [
      'call',
      'edit',
      '{"file_path":"package.json","old_string":"\\"name\\": \\"isoagent\\"","new_string":"\\"name\\": \\"renamed\\"","dry_run":true}',
    ],
  ],
  [
    'Grep like ripgrep (ignore files respected): matching lines per file',
    [
      'call',
      'search',
      '{"mode":"grep","query":"IsoagentError\\\\(","output_mode":"count","limit":5}',
    ],
  ],
  ['Glob: test files', ['call', 'search', '{"mode":"glob","query":"*.test.ts","limit":6}']],
  [
    'BM25: ranked chunks for a question',
    ['call', 'search', '{"mode":"bm25","query":"apply a unified diff hunk","limit":2,"context":1}'],
  ],
  [
    'An escape attempt, refused with a typed error',
    ['call', 'read', '{"file_path":"../../etc/passwd"}'],
  ],
  [
    'A bad argument, refused before anything runs',
    ['call', 'read', '{"file_path":"README.md","limit":0}'],
  ],
  ['Run a command through bash (local disk only)', ['call', 'bash', '{"command":"ls"}']],
]

for (const [title, args] of steps) {
  const shown = args.map((a) => (a.includes(' ') || a.includes('{') ? `'${a}'` : a)).join(' ')
  process.stdout.write(`\n## ${title}\n$ isoagent ${shown} --workspace .\n`)
  const run = spawnSync(process.execPath, [cli, ...args, '--workspace', root], { encoding: 'utf8' })
  process.stdout.write(run.stdout)
  if (run.stderr) process.stdout.write(run.stderr)
  process.stdout.write(`(exit code ${run.status})\n`)
}
