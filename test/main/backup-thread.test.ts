import Database from 'better-sqlite3'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { snapshotBackup } from '../../src-main/store/backup'
import { tempDir } from './helpers'

const open: Database.Database[] = []
afterEach(() => {
  while (open.length) open.pop()!.close()
})

/**
 * A WAL database of `rows` rows of ~a page each, its writer's insert, and the backup thread's
 * own connection to it.
 */
function database(rows: number) {
  const path = join(tempDir(), 'arbor.db')
  const writer = new Database(path)
  open.push(writer)
  writer.pragma('journal_mode = WAL')
  writer.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  const insert = writer.prepare('INSERT INTO t (v) VALUES (?)')
  writer.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run('x'.repeat(4000))
  })()
  const source = new Database(path, { readonly: true })
  open.push(source)
  return { writer, insert, source }
}

describe('an online backup (the backup thread)', () => {
  it('copies one snapshot to its end while another connection writes between every two of its steps', async () => {
    // ~12 MB (~3,000 pages): ~30 steps. SQLite starts an online backup again from its first page
    // whenever another connection wrote between two steps: written to at every step, as here, it
    // never got to its end.
    const { writer, insert, source } = database(3000)
    const pages = writer.pragma('page_count', { simple: true }) as number
    const target = join(tempDir(), 'copy.db')
    let steps = 0
    await snapshotBackup(source, target, () => {
      // Started again and again: given up well before it could be mistaken for a slow copy.
      if (++steps > pages / 100 + 10) throw new Error(`still copying after ${steps} steps`)
      insert.run('written during the copy')
    })
    expect(source.inTransaction).toBe(false)
    const made = new Database(target, { readonly: true })
    open.push(made)
    expect(made.pragma('quick_check', { simple: true })).toBe('ok')
    // The snapshot it began with: every row written before it, none written while it copied.
    expect(made.prepare('SELECT count(*) FROM t').pluck().get()).toBe(3000)
    expect(writer.prepare('SELECT count(*) FROM t').pluck().get()).toBe(3000 + steps)
  })

  it('stops between two steps when asked, and lets its snapshot go', async () => {
    const { source } = database(1000)
    let steps = 0
    const stopped = snapshotBackup(source, join(tempDir(), 'copy.db'), () => {
      if (++steps === 3) throw new Error('the backup was stopped (Arbor is closing)')
    })
    await expect(stopped).rejects.toThrow('stopped')
    expect(source.inTransaction).toBe(false)
  })
})
