import { spawn, spawnSync } from 'node:child_process'
import { open } from 'node:fs/promises'
import { fetch as ufetch, request } from 'undici'
const child = spawn(process.execPath, ['-e', `
const http=require('node:http'); const body=Buffer.alloc(128*1024*1024, 7);
const s=http.createServer((q,r)=>{r.writeHead(200,{'content-length':String(body.length)});r.end(body)}).listen(0,'127.0.0.1',()=>process.stdout.write(s.address().port+'\\n'))`], { stdio: ['ignore','pipe','inherit'] })
const port = await new Promise<number>((r) => child.stdout.once('data', (d) => r(Number(String(d)))))
const url = `http://127.0.0.1:${port}/`
import { Readable } from 'node:stream'
for (const mode of ['curl', 'read', 'toweb-read', 'request-read', 'read', 'toweb-read', 'request-read', 'curl']) {
  const t = performance.now()
  let n = 0, chunks = 0
  if (mode === 'curl') { spawnSync('curl', ['-sS', '-o', '/tmp/prof-c.bin', url]); console.log('curl', (performance.now() - t).toFixed(0)); continue }
  const fh = await open('/tmp/prof.bin', 'w')
  if (mode === 'toweb-read') {
    const { body: b } = await request(url)
    const reader = (Readable.toWeb(b) as ReadableStream<Uint8Array>).getReader()
    for (;;) { const { done, value } = await reader.read(); if (done) break; n += value.length; chunks++ }
  } else if (mode.startsWith('request')) {
    const { body: b } = await request(url)
    for await (const c of b) { if (mode === 'request-write') await fh.write(c, 0, c.length, n); n += c.length; chunks++ }
  } else {
    const r = await ufetch(url)
    const reader = r.body!.getReader()
    for (;;) { const { done, value } = await reader.read(); if (done) break; if (mode === 'write') await fh.write(value, 0, value.length, n); n += value.length; chunks++ }
  }
  await fh.close()
  console.log(mode, (performance.now() - t).toFixed(0), 'ms', chunks, 'chunks', n)
}
child.kill()
