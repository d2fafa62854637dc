import { IsoagentError } from '../../errors.ts'

/** How a request took part in coalescing. */
export type CoalescingRole = 'leader' | 'shared' | 'bypass'

/** Counters of a {@link Coalescer} (the `search_coalescing` metadata). */
export interface CoalescingCounters {
  max_in_flight: number
  in_flight: number
  leader_requests: number
  shared_requests: number
  bypassed_requests: number
  abandoned_requests: number
}

interface Flight<T> {
  promise: Promise<T>
  controller: AbortController
  waiters: number
}

/**
 * Identical concurrent requests share one run: the first is the leader, those arriving while it
 * runs share its result. Each waiter leaves on its own signal (abandon); the run is aborted only
 * when every waiter has left. Past `maxInFlight` distinct runs, requests bypass coalescing.
 */
export class Coalescer<T> {
  private readonly flights = new Map<string, Flight<T>>()
  private readonly counters: CoalescingCounters

  constructor(maxInFlight = 64) {
    this.counters = {
      max_in_flight: maxInFlight,
      in_flight: 0,
      leader_requests: 0,
      shared_requests: 0,
      bypassed_requests: 0,
      abandoned_requests: 0,
    }
  }

  snapshot(): CoalescingCounters {
    return { ...this.counters, in_flight: this.flights.size }
  }

  async run(
    key: string,
    signal: AbortSignal,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<{ value: T; role: CoalescingRole; waiters: number }> {
    const existing = this.flights.get(key)
    if (existing === undefined && this.flights.size >= this.counters.max_in_flight) {
      this.counters.bypassed_requests++
      return { value: await work(signal), role: 'bypass', waiters: 1 }
    }
    let flight = existing
    let role: CoalescingRole = 'shared'
    if (flight === undefined) {
      role = 'leader'
      const controller = new AbortController()
      const started: Flight<T> = {
        promise: Promise.resolve().then(() => work(controller.signal)),
        controller,
        waiters: 0,
      }
      flight = started
      this.flights.set(key, started)
      started.promise.then(
        () => this.flights.get(key) === started && this.flights.delete(key),
        () => this.flights.get(key) === started && this.flights.delete(key),
      )
      this.counters.leader_requests++
    } else {
      this.counters.shared_requests++
    }
    flight.waiters++
    const joined = flight
    try {
      const value = await this.wait(joined, signal)
      return { value, role, waiters: joined.waiters }
    } catch (error) {
      if (signal.aborted) {
        this.counters.abandoned_requests++
        if (joined.waiters === 1) {
          joined.controller.abort(signal.reason)
          if (this.flights.get(key) === joined) this.flights.delete(key)
        }
      }
      throw error
    } finally {
      joined.waiters--
    }
  }

  private wait(flight: Flight<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(abortError(signal))
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal))
      signal.addEventListener('abort', onAbort, { once: true })
      flight.promise.then(
        (v) => {
          signal.removeEventListener('abort', onAbort)
          resolve(v)
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort)
          reject(e instanceof Error ? e : new Error(String(e)))
        },
      )
    })
  }
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new IsoagentError('cancelled', 'web_search cancelled')
}
