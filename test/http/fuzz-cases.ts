// A bounded fuzz run of malformed requests: none may answer ≥ 500, the server must keep serving.
import { describe, expect, it } from 'vitest'
import { Api, type CaseServer, type CaseServerConfig } from './http-cases.ts'

/** A small seeded PRNG (mulberry32), so a failing run can be repeated. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const TRICKY = [
  '..',
  '.',
  '%2e%2e',
  '..%2F..%2Fetc%2Fpasswd',
  '%252e%252e%252f',
  '%00',
  '%E0%A4%A',
  '%',
  '%zz',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'ӂ',
  '%F0%9F%92%A9',
  '\u{1F4A9}',
  'a'.repeat(3000),
  'read%2F..',
  'read;bash',
  'READ',
  ' read',
  'mcp__x__y',
  '',
]

interface FuzzRequest {
  kind: string
  path: string
  init: RequestInit
}

/** One malformed (or hostile) request, chosen by `r` over the session `id`. */
function fuzzRequest(r: () => number, token: string, id: string): FuzzRequest {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const auth = { authorization: `Bearer ${token}` }
  const trick = () => pick(TRICKY)
  const junkJson = () =>
    pick([
      '{',
      '}',
      '{"args":',
      '{"args": {"file_path": "a"}',
      '[',
      '[]',
      'null',
      'true',
      '0',
      '-1e999',
      '"x"',
      '{"args": 1}',
      '{"args": "s"}',
      '{"args": []}',
      '{"args": null}',
      '{"args": {"__proto__": {"x": 1}}}',
      '{"__proto__": {"args": {}}}',
      '{"args": {"constructor": {"prototype": {}}}}',
      '{"args": {"file_path": {"$ref": "#"}}}',
      '{"args": {"zz": 1}}',
      '{"approved": "yes"}',
      '{"approved": null}',
      '{"approved": 1}',
      '['.repeat(5000) + ']'.repeat(5000),
      '{"a":'.repeat(2000) + '1' + '}'.repeat(2000),
      '\u0000\u0001\u0002',
      '\uFEFF{}',
      String.fromCharCode(...Array.from({ length: 64 }, () => Math.floor(r() * 256))),
    ])
  const kind = pick([
    'bad-json',
    'bad-json',
    'wrong-types',
    'huge-header',
    'unknown-route',
    'unknown-route',
    'bad-token',
    'bad-token',
    'path-trick',
    'path-trick',
    'path-trick',
    'bad-method',
    'bad-event-id',
    'bad-artifact',
  ])
  switch (kind) {
    case 'bad-json':
      return {
        kind,
        path: `/v1/sessions/${id}/tools/${pick(['read', 'write', 'ls', 'edit', 'nope'])}`,
        init: { method: 'POST', headers: auth, body: junkJson() },
      }
    case 'wrong-types': {
      const target = pick([
        `/v1/sessions/${id}/tools/read`,
        `/v1/sessions/${id}/tools/search`,
        `/v1/sessions/${id}/confirmations/${trick()}`,
        '/v1/sessions',
      ])
      const value = pick([1, 'x', [], null, true, { nested: [1, { a: null }] }, -0, 1e308])
      const key = pick(['args', 'approved', 'file_path', 'x', '__proto__'])
      return {
        kind,
        path: target,
        init: { method: 'POST', headers: auth, body: JSON.stringify({ [key]: value }) },
      }
    }
    case 'huge-header':
      return {
        kind,
        path: pick(['/v1/health', `/v1/sessions/${id}`, '/v1/sessions']),
        init: {
          method: 'GET',
          headers: { ...auth, 'x-filler': 'h'.repeat(Math.floor(8_000 + r() * 64_000)) },
        },
      }
    case 'unknown-route':
      return {
        kind,
        path: pick([
          '/v2/sessions',
          '/v1',
          '/v1/',
          '//v1/health',
          '/v1/sessions/x/y/z/w',
          `/v1/sessions/${id}/nothing`,
          `/v1/sessions/${id}/tools/read/extra`,
          '/mcp',
          '/.env',
          '/v1/openapi.yaml',
          `/${trick()}`,
          `/v1/${trick()}/${trick()}`,
          '/v1/health/' + 'x'.repeat(5000),
        ]),
        init: { method: pick(['GET', 'POST', 'DELETE']), headers: auth },
      }
    case 'bad-token':
      return {
        kind,
        path: pick([`/v1/sessions/${id}`, '/v1/sessions', `/v1/sessions/${id}/tools/read`]),
        init: {
          method: pick(['GET', 'POST']),
          headers: {
            authorization: pick([
              'Bearer',
              'Bearer ',
              `Bearer ${token} extra`,
              `bearer ${token.slice(1)}`,
              `Bearer ${token}${token}`,
              `Basic ${token}`,
              `Bearer ${'t'.repeat(2000)}`,
              `Bearer ${encodeURIComponent(trick())}`,
              'Bearer \u00e9\u00e8',
              token,
            ]),
          },
        },
      }
    case 'path-trick': {
      const path = pick([
        `/v1/sessions/${trick()}`,
        `/v1/sessions/${trick()}/tools`,
        `/v1/sessions/${id}/tools/${trick()}`,
        `/v1/sessions/${trick()}/tools/${trick()}`,
        `/v1/sessions/${id}/confirmations/${trick()}`,
        `/v1/sessions/${trick()}/snapshot`,
        `/v1/sessions/${id}/artifacts?uri=${trick()}`,
      ])
      const post = path.includes('/tools/') || path.includes('/confirmations/')
      return {
        kind,
        path,
        init: post
          ? {
              method: 'POST',
              headers: auth,
              body: pick(['{"args": {"zz": 1}}', '{}', '{"approved": 3}']),
            }
          : { method: 'GET', headers: auth },
      }
    }
    case 'bad-method':
      return {
        kind,
        path: pick([
          '/v1/sessions',
          `/v1/sessions/${id}`,
          `/v1/sessions/${id}/tools/read`,
          '/v1/health',
        ]),
        init: { method: pick(['PUT', 'PATCH', 'OPTIONS', 'HEAD']), headers: auth },
      }
    case 'bad-event-id':
      return {
        kind,
        path: `/v1/sessions/${id}/events`,
        init: {
          method: 'GET',
          headers: {
            ...auth,
            'last-event-id': pick(['-1', 'x', '1e3', '99999999999999999999', ' ', '0x10']),
          },
        },
      }
    default:
      return {
        kind,
        path: `/v1/sessions/${id}/artifacts?uri=${encodeURIComponent(pick(['a3s://', 'a3s://tool-output/../../x', 'http://x', trick()]))}`,
        init: { method: 'GET', headers: auth },
      }
  }
}

/** Register the fuzz run against servers made by `start`. */
export function fuzzCases(
  label: string,
  start: (config: CaseServerConfig) => Promise<CaseServer>,
  options: { requests?: number; concurrency?: number; seed?: number } = {},
): void {
  const total = options.requests ?? 10_000
  describe(`HTTP API fuzz (${label})`, () => {
    it(`answers ${total} malformed requests without a 5xx and keeps serving`, async () => {
      const token = 'fuzz-token-abcdefghijklmnop'
      const server = await start({ token, permissions: { ask: ['write(ask/**)'] } })
      const api = new Api(server.baseUrl, token)
      try {
        const id = await api.session()
        const r = rng(options.seed ?? 0x15a9e17)
        const statuses = new Map<number, number>()
        const fives: string[] = []
        const networkErrors = new Map<string, number>()
        let next = 0
        const worker = async () => {
          while (next < total) {
            next++
            const req = fuzzRequest(r, token, id)
            try {
              const res = await fetch(server.baseUrl + req.path, req.init)
              statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
              if (res.status >= 500)
                fives.push(
                  `${res.status} ${req.kind} ${req.init.method} ${req.path.slice(0, 120)}: ${(await res.text()).slice(0, 200)}`,
                )
              else await res.body?.cancel()
            } catch {
              networkErrors.set(req.kind, (networkErrors.get(req.kind) ?? 0) + 1)
            }
          }
        }
        await Promise.all(Array.from({ length: options.concurrency ?? 16 }, worker))
        expect(fives).toEqual([])
        // Only an over-large header may be cut off by the HTTP parser (Node answers 431).
        expect([...networkErrors.keys()].filter((k) => k !== 'huge-header')).toEqual([])
        expect(
          [...statuses.values()].reduce((a, b) => a + b, 0) +
            [...networkErrors.values()].reduce((a, b) => a + b, 0),
        ).toBe(total)
        // Still serving: health, and a real call on the session the run hammered.
        expect((await fetch(server.baseUrl + '/v1/health')).status).toBe(200)
        const written = await api.call(id, 'write', { file_path: 'after-fuzz.txt', content: 'ok' })
        expect(written.exitCode).toBe(0)
        expect((await api.call(id, 'read', { file_path: 'after-fuzz.txt' })).output).toContain('ok')
      } finally {
        await api.closeAll()
        await server.close()
      }
    }, 120_000)
  })
}
