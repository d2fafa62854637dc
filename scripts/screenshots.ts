/**
 * Screenshots of the web demo at 1280×800 for the docs and the README, from the built demo served
 * by `bin/start.mjs` (what `npm start` runs): docs/images/demo-tab.png (this tab, on a first
 * visit: the sample project, a search hit open and marked in the editor), docs/images/demo-review.png
 * (an edit's review: the merge view of the dry run's before and after) and
 * docs/images/demo-server.png (the server workspace: a bash command streamed into the timeline).
 * Needs the build (`npm run screenshots` builds first) and Debian Chromium.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  editorText,
  fillEditor,
  gotoDemo,
  openDemoBrowser,
  startDemoServer,
} from '../test/web-demo/demo-harness.ts'

const root = fileURLToPath(new URL('..', import.meta.url))
const out = join(root, 'docs/images')
mkdirSync(out, { recursive: true })
const shot = (name: string) => join(out, name)

const server = await startDemoServer([], {}, { entry: 'start' })
const demo = await openDemoBrowser()
const { page } = demo
try {
  // This tab, first visit: the sample is seeded, README.md opens; a search opens a line.
  await gotoDemo(page, server.pageUrl('tab'), 'tab')
  await page.waitForSelector('#editor[data-language="markdown"]')
  await page.click('.tree-dir[data-path="src"]')
  await page.click('#tab-search')
  await page.fill('#search-query', 'maxLength')
  await page.click('#search-run')
  await page.click('#search-results .hit[data-path="src/slugify.ts"] >> nth=1')
  await page.waitForSelector('#editor[data-line][data-language="typescript"]')
  await page.mouse.move(0, 0)
  await page.screenshot({ path: shot('demo-tab.png') })

  // The review of an edit: the separator changed, side by side.
  const text = await editorText(page)
  await fillEditor(page, text.replace("options.separator ?? '-'", "options.separator ?? '_'"))
  await page.click('#review')
  await page.waitForSelector('#merge-view .cm-mergeView')
  await page.locator('#diff-before').scrollIntoViewIfNeeded()
  await page.mouse.move(0, 0)
  await page.screenshot({ path: shot('demo-review.png') })

  // The server: a command's output streamed into the timeline.
  await gotoDemo(page, server.pageUrl('server'), 'server')
  await page.waitForSelector('#editor[data-language="markdown"]')
  await page.click('#tab-git')
  await page.click('#git-status')
  await page.waitForSelector('#git-output .result')
  await page.click('#tab-console')
  await page.selectOption('#console-tool', 'bash')
  await page.fill('#arg-bash-command', 'git log --oneline && ls -la src test')
  await page.click('#console-run')
  await page.waitForSelector('#console-result .result')
  await page.mouse.move(0, 0)
  await page.screenshot({ path: shot('demo-server.png') })
  if (demo.errors.length) throw new Error(`page errors: ${demo.errors.join('\n')}`)
  console.log(`wrote demo-tab.png, demo-review.png and demo-server.png in ${out}`)
} finally {
  await demo.close()
  await server.stop()
}
