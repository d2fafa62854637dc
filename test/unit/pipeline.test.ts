import { describe, expect, it } from 'vitest'
import { SearchPipeline } from '../../src/tools/search/pipeline/pipeline.ts'
import { TURN_MS } from '../../src/tools/search/tuning.ts'

describe('SearchPipeline', () => {
  it('gives the event loop a turn while its source keeps answering at once', async () => {
    /** Batches that each keep the thread busy for a while, with no macrotask in between. */
    async function* busy(): AsyncGenerator<readonly number[], void> {
      for (let k = 0; k < 8; k++) {
        const until = Date.now() + TURN_MS / 2
        while (Date.now() < until) {
          // Busy: the thread does the work of a scan that never waits.
        }
        yield [k]
      }
    }
    const pipeline = new SearchPipeline(busy(), new AbortController(), {}, 0)
    let turns = 0
    const timer = setInterval(() => turns++, 0)
    const items: number[] = []
    try {
      for (;;) {
        let item = pipeline.next()
        if (item instanceof Promise) item = await item
        if (item === undefined) break
        items.push(item)
      }
    } finally {
      clearInterval(timer)
    }
    expect(items).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    // 8 batches of TURN_MS / 2 each: a turn after every second one, about.
    expect(turns).toBeGreaterThanOrEqual(2)
  })
})
