// The session counter of the Worker: one Durable Object that holds a lease per open session.
import type { DurableObjectNamespaceLike, DurableObjectStateLike } from './env.ts'

const REGISTRY_NAME = 'isoagent:sessions'
const LEASE_PREFIX = 'lease:'

/** The lease of a session: counted until released or until it runs out unrenewed. */
export function leaseMs(sessionIdleMs: number): number {
  return 2 * sessionIdleMs + 60_000
}

interface LeaseRequest {
  id: string
  max?: number
  leaseMs?: number
}

/**
 * The Durable Object that counts sessions across objects for `ISOAGENT_MAX_SESSIONS`. Each
 * session holds a lease, taken before its object is created, renewed by the object's idle
 * alarm, released when the session closes. A lease that is neither renewed nor released (an
 * object that was reset) runs out after {@link leaseMs}, so the count heals by itself.
 */
export class IsoagentRegistry {
  constructor(private readonly state: DurableObjectStateLike) {}

  async fetch(request: Request): Promise<Response> {
    const op = new URL(request.url).pathname.slice(1)
    const body = (await request.json()) as LeaseRequest
    const storage = this.state.storage
    const key = LEASE_PREFIX + body.id
    const now = Date.now()
    if (op === 'reserve') {
      const leases = await storage.list<number>({ prefix: LEASE_PREFIX })
      const expired = [...leases].filter(([, until]) => until <= now).map(([k]) => k)
      if (expired.length > 0) await storage.delete(expired)
      if (leases.size - expired.length >= (body.max ?? Infinity))
        return Response.json({ ok: false, held: leases.size - expired.length }, { status: 429 })
      await storage.put(key, now + (body.leaseMs ?? 60_000))
      return Response.json({ ok: true })
    }
    if (op === 'renew') {
      if ((await storage.get(key)) !== undefined)
        await storage.put(key, now + (body.leaseMs ?? 60_000))
      return Response.json({ ok: true })
    }
    if (op === 'release') {
      await storage.delete(key)
      return Response.json({ ok: true })
    }
    return Response.json({ ok: false }, { status: 404 })
  }
}

/** A client of the registry, or undefined when `REGISTRY` is not bound (no global limit). */
export function registryClient(namespace: DurableObjectNamespaceLike | undefined) {
  if (namespace === undefined) return undefined
  const stub = namespace.get(namespace.idFromName(REGISTRY_NAME))
  const call = (op: string, body: LeaseRequest) =>
    stub.fetch(`https://registry/${op}`, { method: 'POST', body: JSON.stringify(body) })
  return {
    async reserve(id: string, max: number, lease: number): Promise<boolean> {
      const res = await call('reserve', { id, max, leaseMs: lease })
      await res.body?.cancel()
      return res.ok
    },
    async renew(id: string, lease: number): Promise<void> {
      await (await call('renew', { id, leaseMs: lease })).body?.cancel()
    },
    async release(id: string): Promise<void> {
      await (await call('release', { id })).body?.cancel()
    },
  }
}
