import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  blockedAddress,
  checkHostLiteral,
  IsoagentError,
  safeFetch,
  type HttpTransport,
  type HttpTransportRequest,
} from '../../adapters/index.ts'
import { nodeHttpTransport, pinnedLookup } from '../../adapters/node/index.ts'
import { startServer, type TestServer } from './http-fixture.ts'

/** A transport that records every hop and never sends anything. */
function recorder(): HttpTransport & { hops: string[] } {
  const hops: string[] = []
  return {
    hops,
    addressCheck: 'literal_only',
    fetch: (request: HttpTransportRequest) => {
      hops.push(request.url.href)
      return Promise.resolve(new Response('sent'))
    },
  }
}

/** The same Node transport, recording each hop it is given. */
function recordingNode(): HttpTransport & { hops: string[] } {
  const hops: string[] = []
  return {
    hops,
    addressCheck: 'resolved',
    fetch: (request) => {
      hops.push(request.url.href)
      return nodeHttpTransport.fetch(request)
    },
  }
}

async function refusal(promise: Promise<unknown>): Promise<IsoagentError> {
  try {
    await promise
  } catch (error) {
    if (IsoagentError.is(error)) return error
    throw error
  }
  throw new Error('the request was not refused')
}

const LITERALS = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://127.0.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0x7f.0.0.1/',
  'http://0x7f.0x0.0x0.0x1/',
  'http://0x7F.00.0.01/',
  'http://0177.0.0.1/',
  'http://017700000001/',
  'http://0x7f.1/',
  'http://127.255.255.254/',
  'http://127.000.000.001/',
  'http://127.0.0.1.:80/',
  'http://127.0.0.1../',
  'http://127.0.0.1...:8080/',
  'http://0x7f000001../',
  'http://%31%32%37.0.0.1/',
  'http://１２７.０.０.１/',
  'http://127。0。0。1/',
  'https://127.0.0.1:443/',
  'http://0/',
  'http://0.0.0.0/',
  'http://0000/',
  'http://0x0/',
  'http://[::1]/',
  'http://[::1]:8080/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[0:0:0:0:0:ffff:127.0.0.1]/',
  'http://[::127.0.0.1]/',
  'http://[::7f00:1]/',
  'http://[::ffff:0:7f00:1]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://0xa9fea9fe/',
  'http://2852039166/',
  'http://0251.0376.0251.0376/',
  'http://169.254.43518/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[fe80::1]/',
  'http://[fe80::a9fe:a9fe]/',
  'http://[fc00::1]/',
  'http://[fd00::1]/',
  'http://[fd12:3456:789a::1]/',
  'http://[fd00:ec2::254]/',
  'http://[ff02::1]/',
  'http://[ff00::]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::a00:1]/',
  'http://[64:ff9b::808:808]/',
  'http://[64:ff9b:1::1]/',
  'http://[2002:7f00:1::]/',
  'http://[2002:a9fe:a9fe::]/',
  'http://[2002:808:808::1]/',
  'http://[2001:db8::1]/',
  'http://[2001::1]/',
  'http://[2001:10::1]/',
  'http://[2001:2::1]/',
  'http://[100::1]/',
  'http://[fec0::1]/',
  'http://10.0.0.1/',
  'http://10.255.255.255/',
  'http://012.0.0.1/',
  'http://167772161/',
  'http://0xa.0.0.1/',
  'http://10.1/',
  'http://172.16.0.1/',
  'http://172.31.255.254/',
  'http://0xac100001/',
  'http://192.168.0.1/',
  'http://192.168.1.1:8080/',
  'http://0xc0a80001/',
  'http://3232235521/',
  'http://0300.0250.0.1/',
  'http://100.64.0.1/',
  'http://100.127.255.254/',
  'http://192.0.0.1/',
  'http://192.0.2.1/',
  'http://198.51.100.1/',
  'http://203.0.113.1/',
  'http://198.18.0.1/',
  'http://198.19.255.255/',
  'http://224.0.0.1/',
  'http://239.255.255.250/',
  'http://240.0.0.1/',
  'http://255.255.255.255/',
  'http://[::ffff:10.0.0.1]/',
  'http://[::ffff:192.168.1.1]/',
  'http://[::ffff:100.64.0.1]/',
  'http://localhost/',
  'http://LOCALHOST:3000/',
  'http://localhost./',
  'http://localhost../',
  'http://LOCALHOST...:3000/',
  'http://printer.local../',
  'http://foo.localhost/',
  'http://printer.local/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://router.home.arpa/',
  'http://user:pass@example.com/',
  'http://user@example.com/',
  'file:///etc/passwd',
  'ftp://example.com/',
  'gopher://127.0.0.1:25/',
  'data:text/plain,hi',
  'javascript:alert(1)',
  'ws://example.com/',
  'not a url',
]

describe('SSRF corpus: literal destinations are refused before anything is sent', () => {
  for (const url of LITERALS) {
    it(url, async () => {
      const transport = recorder()
      const error = await refusal(safeFetch(url, {}, { transport }))
      expect(['permission_denied', 'invalid_argument']).toContain(error.code)
      expect(transport.hops).toEqual([])
    })
  }
})

const DNS_ANSWERS: [string, string[]][] = [
  ['loopback', ['127.0.0.1']],
  ['private 10/8', ['10.0.0.5']],
  ['private 192.168/16', ['192.168.10.1']],
  ['cloud metadata', ['169.254.169.254']],
  ['unspecified', ['0.0.0.0']],
  ['IPv6 loopback', ['::1']],
  ['IPv6 ULA', ['fd00::1']],
  ['IPv6 link-local', ['fe80::1']],
  ['IPv4-mapped loopback', ['::ffff:127.0.0.1']],
  ['CGNAT', ['100.64.1.1']],
  ['decimal loopback answer', ['2130706433']],
  ['NAT64 of a private address', ['64:ff9b::a00:1']],
  ['mixed public then private', ['93.184.216.34', '127.0.0.1']],
  ['mixed private then public', ['10.0.0.1', '8.8.8.8']],
  ['mixed IPv6 public and link-local', ['2606:4700::1', 'fe80::1']],
  ['mixed public and mapped private', ['1.1.1.1', '::ffff:192.168.0.1']],
  ['not an address', ['example.com']],
]

describe('SSRF corpus: resolved answers (Node transport, injected resolver)', () => {
  for (const [name, answer] of DNS_ANSWERS) {
    it(`${name}: ${answer.join(', ')}`, async () => {
      let calls = 0
      const resolve = async () => {
        calls++
        return answer
      }
      const error = await refusal(
        safeFetch('http://victim.example/', {}, { transport: nodeHttpTransport, resolve }),
      )
      expect(['permission_denied', 'transport']).toContain(error.code)
      if (name !== 'not an address') expect(error.code).toBe('permission_denied')
      expect(calls).toBeGreaterThanOrEqual(1)
    })
  }
})

describe('SSRF corpus: redirects are re-checked', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  const targets = [
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://[::1]/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://[::ffff:169.254.169.254]/',
    'http://localhost/',
    'http://rebind.example/',
    'file:///etc/passwd',
    'http://user:pw@example.com/',
  ]
  for (const [i, target] of targets.entries()) {
    it(`redirect to ${target}`, async () => {
      server.route(`/r${i}`, (_req, res) => {
        res.writeHead(302, { location: target })
        res.end()
      })
      const transport = recordingNode()
      const start = `http://origin.test:${server.port}/r${i}`
      const error = await refusal(
        safeFetch(
          start,
          {},
          {
            transport,
            allowHosts: ['origin.test'],
            resolve: async (host) => (host === 'origin.test' ? ['127.0.0.1'] : ['10.0.0.1']),
          },
        ),
      )
      expect(['permission_denied', 'invalid_argument']).toContain(error.code)
      expect(server.hits(`/r${i}`)).toBe(1)
      // The transport may be handed a named hop (it refuses it at lookup), never a literal one.
      expect(transport.hops.filter((h) => h !== start && !h.startsWith('http://rebind.'))).toEqual(
        [],
      )
    })
  }

  it('a chain of 11 redirects fails after the tenth', async () => {
    server.route('/loop', (req, res) => {
      const n = Number(new URL(req.url ?? '/', server.origin).searchParams.get('n') ?? 0)
      res.writeHead(302, { location: `/loop?n=${n + 1}` })
      res.end()
    })
    const error = await refusal(safeFetch(server.url('/loop'), {}, { allowHosts: ['127.0.0.1'] }))
    expect(error.code).toBe('transport')
    expect(server.hits('/loop')).toBe(11)
  })

  it('a cross-origin redirect drops Authorization, Cookie, If-Range and any key header', async () => {
    const other = await startServer()
    try {
      other.route('/landing', (_req, res) => res.end('ok'))
      server.route('/cross', (_req, res) => {
        res.writeHead(307, { location: other.url('/landing').replace('127.0.0.1', 'localhost') })
        res.end()
      })
      const result = await safeFetch(
        server.url('/cross'),
        {
          headers: {
            authorization: 'Bearer x',
            cookie: 'a=b',
            'if-range': '"e"',
            'x-subscription-token': 'secret-key',
            range: 'bytes=0-0',
            accept: 'text/html',
          },
        },
        {
          allowHosts: ['127.0.0.1', 'localhost'],
          resolve: async () => ['127.0.0.1'],
        },
      )
      expect(await result.response.text()).toBe('ok')
      const seen = other.lastHeaders('/landing')!
      expect(seen.authorization).toBeUndefined()
      expect(seen.cookie).toBeUndefined()
      expect(seen['if-range']).toBeUndefined()
      expect(seen['x-subscription-token']).toBeUndefined()
      expect(seen.range).toBe('bytes=0-0')
      expect(seen.accept).toBe('text/html')
      expect(server.lastHeaders('/cross')!['x-subscription-token']).toBe('secret-key')
      expect(server.lastHeaders('/cross')!.authorization).toBe('Bearer x')
      expect(result.redirects).toBe(1)
      expect(result.addressCheck).toBe('resolved')
    } finally {
      await other.close()
    }
  })
})

describe('SSRF corpus: DNS rebinding cannot pass the check', () => {
  it('the lookup connects only to the answer it checked, once per resolution', async () => {
    const answers = [['93.184.216.34'], ['127.0.0.1']]
    const lookup = pinnedLookup(async () => answers.shift() ?? [], false)
    const first = await new Promise<unknown>((resolve, reject) =>
      lookup('rebind.example', { all: true }, (err, addresses) =>
        err ? reject(err) : resolve(addresses),
      ),
    )
    expect(first).toEqual([{ address: '93.184.216.34', family: 4 }])
    const second = await new Promise<unknown>((resolve) =>
      lookup('rebind.example', { all: true }, (err) => resolve(err)),
    )
    expect(IsoagentError.is(second, 'permission_denied')).toBe(true)
  })

  it('a resolver answering a second time differently is never asked again for the same connection', async () => {
    const server = await startServer()
    try {
      server.route('/pin', (_req, res) => res.end('pinned'))
      const answers = [['127.0.0.1'], ['127.0.0.2']]
      let calls = 0
      const resolve = async () => {
        calls++
        return answers.shift() ?? ['127.0.0.3']
      }
      const url = `http://pinned.example:${server.port}/pin`
      const result = await safeFetch(url, {}, { allowHosts: ['pinned.example'], resolve })
      expect(await result.response.text()).toBe('pinned')
      expect(calls).toBe(1)
    } finally {
      await server.close()
    }
  })
})

describe('public addresses pass the policy', () => {
  const PUBLIC = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '11.0.0.1',
    '198.20.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
  ]
  for (const address of PUBLIC) {
    it(address, () => {
      expect(blockedAddress(address)).toBeUndefined()
      const host = address.includes(':') ? `[${address}]` : address
      expect(() => checkHostLiteral(new URL(`http://${host}/`), undefined)).not.toThrow()
    })
  }

  it('allowHosts lets a listed loopback literal through, and only that one', () => {
    expect(() => checkHostLiteral(new URL('http://127.0.0.1:8080/'), ['127.0.0.1'])).not.toThrow()
    expect(() =>
      checkHostLiteral(new URL('http://127.0.0.1:8080/'), ['127.0.0.1:8080']),
    ).not.toThrow()
    expect(() => checkHostLiteral(new URL('http://127.0.0.1:9090/'), ['127.0.0.1:8080'])).toThrow()
    expect(() => checkHostLiteral(new URL('http://127.0.0.2/'), ['127.0.0.1'])).toThrow()
  })
})
