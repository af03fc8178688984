import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { openSqliteStore } from './sqlite'
import type { SessionRow, Store } from './types'

export type { Store } from './types'
export * from './types'
export type { McpServerConfig, ProviderConfig, Settings } from './settings'

/**
 * The SQLite checkpoint store in `dataDir/arbor.db`, or the in-memory store (SQLite's
 * `:memory:` database with the same schema and code — so tests of the memory store exercise
 * exactly the SQL the durable store runs; only the file, and so restarts, differ).
 */
export function openStore(
  opts: { kind: 'sqlite'; dataDir: string; checkAtOpenMaxBytes?: number } | { kind: 'memory' },
): Store {
  if (opts.kind === 'memory') return openSqliteStore(':memory:')
  mkdirSync(opts.dataDir, { recursive: true })
  return openSqliteStore(join(opts.dataDir, 'arbor.db'), opts)
}

/**
 * A session with no parent and no messages yet, as `sessions.create` and an imported chat's
 * root begin: `given` names what differs between them, everything else is a fresh session's.
 */
export function rootSessionRow(
  given: Pick<
    SessionRow,
    'session_id' | 'title' | 'created_at' | 'updated_at' | 'model' | 'security' | 'env' | 'plugins'
  > &
    Partial<Pick<SessionRow, 'visible_from_seq' | 'context_from_seq'>>,
): SessionRow {
  return {
    archived: false,
    removed: false,
    paused: false,
    allowed_tools: [],
    parent_session_id: null,
    fork_seq: 0,
    fork_message_id: null,
    fork_snapshot_id: null,
    fork_operation_id: null,
    visible_from_seq: 0,
    context_from_seq: 0,
    last_seq: 0,
    message_count: 0,
    head_snapshot_id: null,
    ...given,
  }
}
