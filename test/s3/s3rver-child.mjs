// Runs s3rver in its own Node process (started by test/s3/server.ts with
// --openssl-legacy-provider: s3rver 3.7.1 encrypts ListObjectsV2 continuation tokens with DES,
// which OpenSSL 3 only offers through its legacy provider; without it every truncated listing
// fails with a 500). Prints {"port": N} once listening; exits when stdin closes or on SIGTERM.
import S3rver from 's3rver'

const [directory, ...buckets] = process.argv.slice(2)
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: buckets.map((name) => ({ name })),
})
const address = await server.run()
process.stdout.write(JSON.stringify({ port: address.port }) + '\n')

let closing = false
const stop = async () => {
  if (closing) return
  closing = true
  await server.close().catch(() => {})
  process.exit(0)
}
process.on('SIGTERM', stop)
process.stdin.on('end', stop)
process.stdin.resume()
