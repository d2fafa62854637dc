// `npm start`: serve the HTTP API over a copy of examples/sample-project in a temporary
// directory (nothing of yours is touched); the copy is removed when the server stops.
// Extra arguments go to `isoagent serve` (e.g. `npm start -- --port 9000`).
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const compiled = new URL('../dist/bin/cli.js', import.meta.url)
if (!existsSync(compiled)) {
  process.stderr.write('isoagent: dist/ is missing; run `npm run build` first\n')
  process.exit(2)
}
const sample = fileURLToPath(new URL('../examples/sample-project', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-'))
cpSync(sample, dir, { recursive: true })
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

// A repository with one commit, so the git tool has history and a diff to show.
const git = (...args) =>
  spawnSync('git', args, {
    cwd: dir,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'isoagent',
      GIT_AUTHOR_EMAIL: 'isoagent@localhost',
      GIT_COMMITTER_NAME: 'isoagent',
      GIT_COMMITTER_EMAIL: 'isoagent@localhost',
    },
  }).status === 0
if (git('init', '-q', '-b', 'main') && git('add', '-A')) git('commit', '-q', '-m', 'sample project')

process.stdout.write(`Demo workspace: a copy of examples/sample-project in ${dir}\n`)
const { main } = await import(compiled.href)
// Commands that delete files or push ask first: the web demo shows the confirmation dialog. Writes
// under secrets/ are refused: the governance panel shows a denied call.
const rules = ['--ask', 'bash(rm *)', '--ask', 'bash(git push*)']
for (const tool of ['write', 'edit', 'patch']) rules.push('--deny', `${tool}(secrets/**)`)
// dynamic_workflow is offered, so the demo's workflows panel runs on the server too.
rules.push('--workflows')
process.exitCode = await main([
  'serve',
  '--workspace',
  dir,
  ...rules,
  ...modelFlags(process.env),
  ...process.argv.slice(2),
])

/**
 * A model for the demo's chat when the environment names one: `ISOAGENT_MODEL_PROVIDER` (with
 * `ISOAGENT_MODEL`, `ISOAGENT_MODEL_BASE_URL`), else the provider whose key is set. The key
 * itself is read by `isoagent serve` from the environment, never passed as an argument.
 */
function modelFlags(env) {
  const provider =
    env.ISOAGENT_MODEL_PROVIDER ||
    (env.ANTHROPIC_API_KEY ? 'anthropic' : env.OPENAI_API_KEY ? 'openai' : undefined)
  if (!provider) return []
  return [
    '--model-provider',
    provider,
    ...(env.ISOAGENT_MODEL ? ['--model', env.ISOAGENT_MODEL] : []),
    ...(env.ISOAGENT_MODEL_BASE_URL ? ['--model-base-url', env.ISOAGENT_MODEL_BASE_URL] : []),
  ]
}
