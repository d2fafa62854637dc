/**
 * Screenshots of the web demo at 1280×800 for the docs and the README: docs/images/demo-tab.png
 * (the in-tab workspace with examples/sample-project imported, a file open, a search) and
 * docs/images/demo-server.png (the server workspace: a bash command streamed into the timeline).
 * Needs the build (`npm run screenshots` builds first) and Debian Chromium.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gotoDemo, openDemoBrowser, startDemoServer } from '../test/web-demo/demo-harness.ts'

const root = fileURLToPath(new URL('..', import.meta.url))
const sample = join(root, 'examples/sample-project')
const out = join(root, 'docs/images')
mkdirSync(out, { recursive: true })

const dir = mkdtempSync(join(tmpdir(), 'isoagent-shots-'))
const project = join(dir, 'sample-project')
cpSync(sample, project, { recursive: true })
const git = (...args: string[]) =>
  spawnSync('git', args, {
    cwd: project,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'isoagent',
      GIT_AUTHOR_EMAIL: 'isoagent@localhost',
      GIT_COMMITTER_NAME: 'isoagent',
      GIT_COMMITTER_EMAIL: 'isoagent@localhost',
    },
  })
git('init', '-q', '-b', 'main')
git('add', '-A')
git('commit', '-q', '-m', 'sample project')

const server = await startDemoServer(['--workspace', project, '--ask', 'bash(rm *)'])
const demo = await openDemoBrowser()
const { page } = demo
try {
  await gotoDemo(page, server.pageUrl('tab'), 'tab')
  await page.setInputFiles('#import-folder', sample)
  await page.waitForSelector('#status:has-text("Imported")')
  await page.click('.tree-dir[data-path="sample-project"]')
  await page.click('#tab-search')
  await page.fill('#search-query', 'slug')
  await page.click('#search-run')
  await page.waitForSelector('#search-results .hit')
  await page.click('#search-results .hit >> nth=2')
  await page.waitForSelector('#editor[data-line]')
  await page.click('#tab-file')
  await page.screenshot({ path: join(out, 'demo-tab.png') })

  await gotoDemo(page, server.pageUrl('server'), 'server')
  await page.click('.tree-file[data-path="README.md"]')
  await page.waitForFunction(
    () => document.getElementById('file-title')?.textContent === 'README.md',
  )
  await page.click('#tab-console')
  await page.selectOption('#console-tool', 'bash')
  await page.fill('#arg-bash-command', 'git log --oneline && ls -la src test')
  await page.click('#console-run')
  await page.waitForSelector('#console-result .result')
  await page.click('#tab-git')
  await page.click('#git-status')
  await page.waitForSelector('#git-output .result')
  await page.click('#tab-console')
  await page.screenshot({ path: join(out, 'demo-server.png') })
  if (demo.errors.length) throw new Error(`page errors: ${demo.errors.join('\n')}`)
  console.log(`wrote ${join(out, 'demo-tab.png')} and ${join(out, 'demo-server.png')}`)
} finally {
  await demo.close()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
