import { chromium } from 'playwright-core'
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox','--disable-gpu','--disable-dev-shm-usage'] })
const p = await b.newPage({ viewport: { width: 1280, height: 800 } })
p.on('pageerror', e => console.log('pageerror', e.message))
await p.goto(`http://127.0.0.1:8931/?token=tok&mode=tab`)
await p.waitForSelector(`body[data-ready=tab]`)
const reload = process.argv[2] === 'reload'
await p.fill('#open-path', 'n/h.txt'); await p.click('#new-file'); await p.fill('#editor', 'a\nb\n'); await p.click('#review'); await p.click('#apply')
await p.waitForSelector('#file-status:has-text("Saved")')
await p.click('#open'); await p.waitForTimeout(300)
await p.fill('#editor', 'a\nc'); await p.click('#review'); await p.waitForSelector('#diff-before .diff'); await p.click('#apply'); await p.waitForSelector('#diff-after .diff')
if (reload) { await p.reload(); await p.waitForSelector(`body[data-ready=tab]`) }
await p.click('#tab-git'); await p.click('#git-init'); await p.waitForSelector('#git-output .result')
await p.click('#git-add'); await p.waitForTimeout(1500)
console.log(await p.textContent('#git-output'))
await b.close()
