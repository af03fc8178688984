import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { openSqliteStore } from './sqlite'
import type { Store } from './types'

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
