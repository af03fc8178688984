import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from './helpers'

const WORKER = join(__dirname, '../../out/main/search-worker.js')

/**
 * In a fresh process (nothing has started libuv's thread pool yet): a backup of a database of a
 * few megabytes on the built worker, the nice value of each thread of the process watched every
 * millisecond meanwhile, then a file read on the main thread; what each thread's nice was.
 */
function backupInFreshProcess(dir: string): { during: number[]; after: Record<string, number> } {
  const script = `
    const Database = require('better-sqlite3')
    const { readdirSync, readFileSync } = require('node:fs')
    const { readFile } = require('node:fs/promises')
    const { Worker } = require('node:worker_threads')
    const [worker, dir] = process.argv.slice(1)
    const nices = () => Object.fromEntries(readdirSync('/proc/self/task').map((t) => {
      try { return [t, Number(readFileSync('/proc/self/task/' + t + '/stat', 'utf8').split(') ')[1].split(' ')[16])] }
      catch { return [t, 0] }
    }))
    const db = new Database(dir + '/a.db')
    db.exec('CREATE TABLE t (v BLOB)')
    const ins = db.prepare('INSERT INTO t VALUES (randomblob(4000))')
    db.transaction(() => { for (let i = 0; i < 4000; i++) ins.run() })()
    db.close()
    const before = new Set(Object.keys(nices()))
    const during = new Set()
    const w = new Worker(worker, { workerData: { path: dir + '/a.db', mode: 'backup', target: dir + '/b.db' } })
    const look = setInterval(() => { for (const [t, n] of Object.entries(nices())) if (!before.has(t)) during.add(n) }, 1)
    w.once('message', async (m) => {
      clearInterval(look)
      if (m.error) throw new Error(m.error)
      await new Promise((r) => w.once('exit', r))
      await readFile(dir + '/b.db')
      console.log(JSON.stringify({ during: [...during], after: nices() }))
    })`
  return JSON.parse(
    execFileSync(process.execPath, ['-e', script, WORKER, dir], { cwd: join(__dirname, '../..') }).toString(),
  ) as { during: number[]; after: Record<string, number> }
}

describe('background threads', () => {
  it.runIf(process.platform === 'linux')(
    'a backup runs at the least priority, and leaves the thread pool it may start at the app’s',
    () => {
      expect(existsSync(WORKER), 'out/main/search-worker.js is missing: run npm run build first').toBe(true)
      const { during, after } = backupInFreshProcess(tempDir())
      // The backup's thread was seen at nice 19 while it copied.
      expect(during).toContain(19)
      // Every thread left (the main one, V8's, libuv's pool that served the read) at the app's.
      expect(Object.values(after).every((n) => n === 0)).toBe(true)
    },
  )
})
