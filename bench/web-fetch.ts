// web_fetch: a 2 MB HTML page over loopback rendered to Markdown by the tool, against a direct
// call of the tool's converter (node-html-markdown in chunks, links made absolute) on the same
// HTML, p50 of each. node-html-markdown called once on a whole page grows quadratically with its
// output (it re-reads its growing result after each append), so the tool converts in chunks of
// about 32 KiB; one direct `NodeHtmlMarkdown.translate` of a 512 KiB slice shows the difference.
//
// The page (prose, tables, code blocks, relative links, navigation and footer) is served by a
// child process on 127.0.0.1. Each round runs the tool call (fetch, decode, convert, slice) and
// the direct conversion, alternating which goes first; WEB_FETCH_BENCH_ROUNDS (default 15).
//
//   npx tsx bench/web-fetch.ts
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { NodeHtmlMarkdown } from 'node-html-markdown'
import { Agent, memoryWorkspace } from '../adapters/index.ts'
import '../adapters/node/index.ts'
import { convertHtml } from '../src/tools/web-fetch/html-convert.ts'
import { machineLine, median } from './harness.ts'

const ROUNDS = Number(process.env.WEB_FETCH_BENCH_ROUNDS ?? 15)
const TARGET_BYTES = 2 * 1024 * 1024

function page(): string {
  const parts = [
    '<!doctype html><html><head><meta charset="utf-8"><title>Bench</title></head><body>',
    '<nav><a href="/">Home</a> <a href="/docs">Docs</a> <a href="/blog">Blog</a></nav><main>',
  ]
  let size = parts.join('').length
  for (let i = 0; size < TARGET_BYTES; i++) {
    const section =
      `<h2 id="s${i}">Section ${i}</h2><p>Paragraph ${i} with <a href="../page${i}.html">a relative link</a>, ` +
      `<strong>bold</strong>, <em>emphasis</em> and <code>inline_code(${i})</code>. ${'Lorem ipsum dolor sit amet. '.repeat(12)}</p>` +
      `<ul><li>item ${i}.1</li><li>item ${i}.2 <a href="/abs/${i}">abs</a></li></ul>` +
      `<table><tr><th>key</th><th>value</th></tr><tr><td>k${i}</td><td>${i * 7}</td></tr><tr><td>x</td><td>y</td></tr></table>` +
      `<pre><code class="language-js">function f${i}(x) {\n  return x * ${i}\n}</code></pre>`
    parts.push(section)
    size += section.length
  }
  parts.push('</main><footer>footer</footer></body></html>')
  return parts.join('')
}

async function main() {
  const html = page()
  const dir = mkdtempSync(join(tmpdir(), 'isoagent-bench-web-fetch-'))
  const file = join(dir, 'page.html')
  writeFileSync(file, html)
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const http=require('node:http'),fs=require('node:fs');const body=fs.readFileSync(process.argv[1]);
       const s=http.createServer((q,r)=>{r.writeHead(200,{'content-type':'text/html; charset=utf-8','content-length':body.length});r.end(body)});
       s.listen(0,'127.0.0.1',()=>process.stdout.write(s.address().port+'\\n'))`,
      file,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
  )
  const url = `http://127.0.0.1:${port}/docs/page.html`
  const session = await Agent.create().session(memoryWorkspace(), {
    net: { allowHosts: ['127.0.0.1'] },
  })
  try {
    const tool = async () => {
      const t = performance.now()
      const r = await session.tool('web_fetch', { url, max_chars: 100_000 })
      if (r.exitCode !== 0) throw new Error(`web_fetch failed: ${r.output}`)
      return { ms: performance.now() - t, chars: Number(r.metadata?.total_chars) }
    }
    const pageUrl = new URL(url)
    const direct = () => {
      const t = performance.now()
      const md = convertHtml(html, pageUrl, 'markdown', false)
      return { ms: performance.now() - t, chars: md.length }
    }
    await tool()
    direct()
    const ours: number[] = []
    const peer: number[] = []
    let chars = { ours: 0, peer: 0 }
    for (let i = 0; i < ROUNDS; i++) {
      const a = i % 2 === 0 ? await tool() : undefined
      const b = direct()
      const c = a ?? (await tool())
      ours.push(c.ms)
      peer.push(b.ms)
      chars = { ours: c.chars, peer: b.chars }
    }
    const o = median(ours)
    const p = median(peer)
    console.log(machineLine())
    console.log(
      `web_fetch of a ${(html.length / 1024 / 1024).toFixed(1)} MB HTML page → Markdown, ${ROUNDS} rounds\n`,
    )
    console.log('| side | p50 | Markdown chars | ratio |')
    console.log('|---|---:|---:|---:|')
    console.log(
      `| web_fetch (loopback fetch + convert + slice) | ${o.toFixed(0)} ms | ${chars.ours} | ${(o / p).toFixed(2)}x |`,
    )
    console.log(
      `| convertHtml (direct, same converter) | ${p.toFixed(0)} ms | ${chars.peer} | 1.00x |`,
    )
    const slice = html.slice(0, html.indexOf('<h2', 512 * 1024)) + '</main></body></html>'
    const chunked = performance.now()
    convertHtml(slice, pageUrl, 'markdown', false)
    const chunkedMs = performance.now() - chunked
    const whole = performance.now()
    NodeHtmlMarkdown.translate(slice)
    const wholeMs = performance.now() - whole
    console.log(
      `\n512 KiB slice: chunked ${chunkedMs.toFixed(0)} ms, one NodeHtmlMarkdown.translate ${wholeMs.toFixed(0)} ms (${(wholeMs / chunkedMs).toFixed(1)}x)`,
    )
  } finally {
    await session.close()
    child.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
