import Database from 'better-sqlite3'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { backupOnThread } from '../../src-main/store/search-client'
import { tempDir } from './helpers'

const WORKER = join(__dirname, '../../out/main/search-worker.js')

describe('a backup on its own thread', () => {
  it('completes while another connection writes between its steps, as one consistent snapshot', async () => {
    expect(existsSync(WORKER), 'out/main/search-worker.js is missing: run npm run build first').toBe(true)
    // ~12 MB: a copy of ~30 steps of 100 pages. SQLite starts an online backup again from its
    // first page whenever another connection wrote between two of its steps; written to at every
    // turn of the event loop, as here, it never got to its end.
    const dir = tempDir()
    const db = new Database(join(dir, 'arbor.db'))
    db.pragma('journal_mode = WAL')
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)')
    db.transaction(() => {
      for (let i = 0; i < 3000; i++) insert.run('x'.repeat(4000))
    })()
    const copy = backupOnThread(join(dir, 'arbor.db'), WORKER, join(dir, 'copy.db'))
    let settled = false
    let writes = 0
    const outcome = copy.result.then(
      () => 'copied',
      (err: unknown) => String(err),
    )
    void outcome.finally(() => (settled = true))
    const writer = () => {
      if (settled) return
      insert.run('y')
      writes++
      setImmediate(writer)
    }
    writer()
    const timedOut = new Promise<string>((resolve) =>
      setTimeout(() => resolve('not copied after 15 s'), 15_000),
    )
    try {
      expect(await Promise.race([outcome, timedOut])).toBe('copied')
    } finally {
      settled = true
      await copy.stop()
      db.close()
    }
    expect(writes).toBeGreaterThan(0)
    const made = new Database(join(dir, 'copy.db'), { readonly: true })
    try {
      expect(made.pragma('quick_check', { simple: true })).toBe('ok')
      // The snapshot the copy began with: every row written before it, whatever came after.
      const rows = made.prepare('SELECT count(*) FROM t').pluck().get() as number
      expect(rows).toBeGreaterThanOrEqual(3000)
      expect(rows).toBeLessThanOrEqual(3000 + writes)
    } finally {
      made.close()
    }
  })
})
