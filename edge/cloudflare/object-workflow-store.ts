import type { NewWorkflowEvent, WorkflowEvent, WorkflowStore } from '../../adapters/index.ts'
import { sequenceEvents } from '../../src/tools/dynamic-workflow/workflow-store.ts'

/** A cursor of `SqlStorage.exec` (the part the store reads). */
export interface SqlCursorLike {
  toArray(): Record<string, unknown>[]
}

/** The SQL API of a SQLite-backed Durable Object's storage (`ctx.storage.sql`). */
export interface SqlStorageLike {
  exec(query: string, ...bindings: unknown[]): SqlCursorLike
}

/** The storage a {@link durableObjectWorkflowStore} needs: SQL and synchronous transactions. */
export interface SqlObjectStorageLike {
  readonly sql: SqlStorageLike
  transactionSync<T>(fn: () => T): T
}

const TABLE = 'isoagent_workflow_events'

/**
 * A `WorkflowStore` in the SQLite storage of a Durable Object: one row per journal event
 * (`run_id`, `seq`, the event's JSON). An append runs in one `transactionSync`: the check of the
 * run's last sequence and terminal event and the inserts are one synchronous transaction, so two
 * drivers in the object cannot interleave, and the events are all stored or none. Rows are
 * durable once the transaction commits, so a run outlives the object's memory (an eviction, a
 * restart of workerd) and a later drive resumes it without re-running a completed step.
 */
export function durableObjectWorkflowStore(storage: SqlObjectStorageLike): WorkflowStore {
  let ready = false
  const sql = (query: string, ...bindings: unknown[]) => {
    if (!ready) {
      storage.sql.exec(
        `CREATE TABLE IF NOT EXISTS ${TABLE} (run_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (run_id, seq))`,
      )
      ready = true
    }
    return storage.sql.exec(query, ...bindings).toArray()
  }
  const parse = (row: Record<string, unknown>) => JSON.parse(String(row.event)) as WorkflowEvent
  return {
    async append(runId: string, afterSequence: number, events: readonly NewWorkflowEvent[]) {
      return storage.transactionSync(() => {
        const last = sql(
          `SELECT event FROM ${TABLE} WHERE run_id = ? ORDER BY seq DESC LIMIT 1`,
          runId,
        ).map(parse)
        const stored = sequenceEvents(runId, last, afterSequence, events)
        for (const event of stored)
          sql(
            `INSERT INTO ${TABLE} (run_id, seq, event) VALUES (?, ?, ?)`,
            runId,
            event.sequence,
            JSON.stringify(event),
          )
        return stored
      })
    },
    async history(runId) {
      return sql(`SELECT event FROM ${TABLE} WHERE run_id = ? ORDER BY seq`, runId).map(parse)
    },
    async list() {
      return sql(`SELECT DISTINCT run_id FROM ${TABLE} ORDER BY run_id`).map((r) =>
        String(r.run_id),
      )
    },
  }
}

/** Whether `storage` is SQLite-backed (has the SQL API the store needs). */
export function hasSqlStorage(storage: object): storage is SqlObjectStorageLike {
  const s = storage as Partial<SqlObjectStorageLike>
  return typeof s.sql?.exec === 'function' && typeof s.transactionSync === 'function'
}
