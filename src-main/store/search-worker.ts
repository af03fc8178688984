/**
 * The search worker (built to out/main/search-worker.js): full-text search on its own read-only
 * connection, so a search never runs on the host's event loop. WAL lets it read while the
 * runtime writes; it sees what is committed. Started in its check mode, the same script runs
 * the deferred integrity check (SQLite's quick_check) of a database too large to check at open;
 * in its backup mode, an online backup; in its checkpoint mode, the copying of the write-ahead
 * log back into the database, which would otherwise stall a commit on the host's event loop.
 */
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import { snapshotBackup } from './backup'
import { FASTEST_MS, nextLookMs } from './checkpoint-pace'
import { LOG_SIZE_LIMIT, quickCheck } from './sqlite/db'
import { sqliteSettings } from './sqlite/settings'
import { prepareSearch } from './sqlite/search'
import { lowerThisThread } from './thread-priority'

const { path, mode, target, everyMs, restartPages, holdWriters } = workerData as {
  path: string
  mode?: 'check' | 'backup' | 'checkpoint'
  target?: string
  everyMs?: number
  restartPages?: number
  /**
   * Checkpoint mode: [0] is 1 while a restart of the log waits for a moment without a writer;
   * [1] counts the host's bulk writers holding their next chunk meanwhile.
   */
  holdWriters?: Int32Array
}
const db = new Database(path, { readonly: mode !== 'checkpoint', fileMustExist: true })

/** A `wal_checkpoint` pragma's answer: refused (busy), and the log's frames, how many copied back. */
interface Checkpointed {
  busy: number
  log: number
  checkpointed: number
}

/** How often, and how many times a tick, a RESTART that found the writer busy is tried again. */
const RESTART_RETRY_MS = 5
const RESTART_ATTEMPTS = 40
/**
 * How many tries may fail while the host's bulk writers hold their next chunk before they are
 * let go for the rest of the round. With them held, a try finds the lock free, unless a reader
 * keeps an older snapshot of the log (a long read, such as the deferred integrity check): then
 * holding them longer would only stall them.
 */
const HOLD_FAILS = 3

if (mode === 'checkpoint') {
  // Never wait for the writer here: a RESTART that finds it busy returns at once (below).
  db.pragma('busy_timeout = 0')
  // PASSIVE: copies what it can without waiting for the writer or a reader and without taking
  // the write lock, so a commit never waits for this thread in SQLite (only, now and then, for
  // the disk while it syncs); what a reader still uses is copied at a later tick. A tick with
  // nothing new in the log returns at once, without an fsync.
  // Then RESTART once the log is long (restartPages), if no one is writing at that moment: the
  // log starts again from its beginning. A writer only restarts it when every frame was copied
  // back as it begins, and one that commits every few milliseconds always finds a few new ones
  // (the copy and its fsync take longer here): the log would grow to the store's backstop, whose
  // checkpoint on the host's event loop stalls a commit for 30-60 ms. But a RESTART is not free
  // either: it holds the write lock while it copies the last frames and syncs both files, and
  // the first commit into the restarted log syncs its header (this thread's own, since `startLog`
  // below; before, the host's next commit, on its event loop): each a 10-50 ms commit when the
  // disk is busy. Restarting at every tick that found anything new (as before) made that once a
  // second under steady writes (the background indexing of an older database: its chunks' p99
  // was 30-65 ms); now it is once per restartPages.
  // A RESTART that finds the writer busy is tried again a few milliseconds later, for a while:
  // a log left to grow to the store's backstop is copied back inside one of the host's commits
  // (60-136 ms). One round of tries at a time (the looks come faster than a round lasts when the
  // log grows fast). Through the round, `holdWriters` asks the host's bulk writers (an import,
  // erasing, indexing) to hold their next chunk (holdForCheckpoint): they write one event-loop
  // turn apart, so a retry rarely found the lock free (in a test, 6-10 restarts in 2 s where
  // 50-60 were due, and the log held most of what was written), and a chunk that began while a
  // RESTART held the lock waited for it in its commit, on the host's event loop. Not once a few
  // tries failed while they held because a reader keeps an old snapshot (HOLD_FAILS, `pinned`):
  // holding them then only stalls them.
  let restarting = false
  let failsWhileHeld = 0
  /**
   * A RESTART refused because a reader keeps an older snapshot: it copied back less than the
   * whole log. Refused with every frame copied, it met a writer at work, such as another bulk
   * writer in the middle of its chunk (an import while a chat is erased). Counted too, as they
   * were, that writer's long chunk let the ones holding go after 3 tries for the rest of the
   * round: in a test the log file then held 10-36 % of all that was written, near the store's
   * backstop; 4.6-5.9 % now. (A reader still reading the newest snapshot from the log is not
   * counted either: its read ends, and the round's tries are bounded.)
   */
  const pinned = (c: Checkpointed | undefined) =>
    c !== undefined && c.checkpointed >= 0 && c.checkpointed < c.log
  const hold = (on: boolean) => {
    if (holdWriters) Atomics.store(holdWriters, 0, on ? 1 : 0)
  }
  // Whether the store's backstop is off because a reader keeps the long log from being copied
  // (LogCopier 'thread'): on again once the log is restarted, or copied and no longer pinned.
  let lifted = false
  const lift = (on: boolean) => {
    if (on === lifted) return
    lifted = on
    parentPort!.postMessage({ pinned: on })
  }
  // The first commit into a log that starts again from its beginning (after a RESTART, or once
  // every frame in it was copied back) syncs the log's new header before it writes a frame: SQLite
  // does so with synchronous NORMAL. That commit was the host's next one, on its event loop: with
  // a person's pauses between prompts, the thread had copied the log back by the next prompt, and
  // its transaction synced the log (strace: one fsync on the host's thread per prompt, none now).
  // Prompt → first delta after a 1.2 s pause, in process (`npm run bench -- --only=pause`): median
  // 1.38-1.72 ms, p90 1.64-1.94 before; 0.95-1.15 and 1.16-1.56 ms now; and an fsync takes longer
  // still on a busy disk. So this thread makes that commit itself as soon as it leaves the log so
  // (`startLog`: a settings row of its own), and the host's next commit adds to a log already
  // started. (That commit by another connection also empties the host's page cache, as any does:
  // it reads its pages from the system's cache again, included in the figures above.) Then,
  // until the host commits again, a look does not copy that row back (the log would be left to
  // start again, by the host), and an idle app writes nothing more. The same commit cuts a log
  // file that grew in a burst back to the store's limit (LOG_SIZE_LIMIT, a setting of each
  // connection). When a reader still uses the log, no commit can start it again: the row is
  // added to it, and copied back at a later look. Not in a database without the settings table
  // (tests).
  db.pragma(`journal_size_limit = ${LOG_SIZE_LIMIT}`)
  const settings = (() => {
    try {
      return sqliteSettings(db)
    } catch {
      return null
    }
  })()
  const dataVersion = () => db.pragma('data_version', { simple: true }) as number
  /**
   * The connection's data_version when this thread last started the log: a commit of the host's
   * changes it (this connection's own do not). Read before the write, so that a host commit
   * between the two is not taken for none.
   */
  let startedAt: number | null = null
  const startLog = () => {
    if (!settings) return
    const version = dataVersion()
    try {
      settings.setSetting('log_started', Date.now())
      startedAt = version
    } catch (err) {
      // The host's writer was first (busy): its commit starts the log, as it did before.
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err
    }
  }
  const restart = (attempts: number) => {
    restarting = false
    if (!db.open) return hold(false)
    if (attempts === RESTART_ATTEMPTS) failsWhileHeld = 0
    hold(failsWhileHeld < HOLD_FAILS)
    const held = holdWriters !== undefined && Atomics.load(holdWriters, 1) > 0
    try {
      const [done] = db.pragma('wal_checkpoint(RESTART)') as Array<Checkpointed>
      if (done && done.busy === 0) {
        parentPort!.postMessage({ restarted: true })
        lift(false)
        // While the bulk writers still hold.
        startLog()
      } else if (attempts > 1) {
        if (held && pinned(done)) failsWhileHeld++
        restarting = true
        setTimeout(() => restart(attempts - 1), RESTART_RETRY_MS)
      } else if (done && done.log >= 0 && !pinned(done)) {
        // A round of tries lost to writers, the log all copied: the store's backstop bounds it
        // again (a writer with no pause would never let it restart). Its next commit copies
        // what is new since this try, if the log is that long.
        lift(false)
      }
    } catch (err) {
      parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) })
    }
    if (!restarting) hold(false)
  }
  const every = everyMs ?? 1000
  const restartAt = restartPages ?? 1
  // The log's length at the last look, and when that was: how fast it grows sets the next look.
  let lastLog = 0
  let lastAt = performance.now()
  let timer: NodeJS.Timeout
  let dueAt = 0
  const lookIn = (ms: number) => {
    clearTimeout(timer)
    timer = setTimeout(tick, ms)
    dueAt = performance.now() + ms
  }
  const tick = () => {
    const at = performance.now()
    let log = lastLog
    if (startedAt !== null && !restarting && dataVersion() === startedAt) {
      lastAt = at
      return lookIn(every)
    }
    startedAt = null
    try {
      const [passive] = db.pragma('wal_checkpoint(PASSIVE)') as Array<Checkpointed>
      // -1: another connection was copying the log back (the store's, at its backstop or close).
      const seen = passive?.log ?? 0
      if (seen >= 0) log = seen
      const inTheWay = pinned(passive)
      if (seen >= 0 && seen < restartAt) lift(false)
      else if (inTheWay) lift(true)
      // Not while a reader is in the way: no RESTART could succeed, and the writers asked to hold
      // for it would wait in vain. The next look is soon (lifted).
      if (seen >= restartAt && !restarting && !inTheWay) restart(RESTART_ATTEMPTS)
      // Every frame copied back: the host's next commit would start the log again.
      else if (seen > 0 && passive!.checkpointed === seen && !restarting) startLog()
    } catch (err) {
      parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) })
    }
    // Shorter than at the last look: restarted in between, so all of it is new.
    const grown = log >= lastLog ? log - lastLog : log
    // Lifted: looking often, to copy the log soon after the reader that pins it ends (a look
    // that can copy nothing returns at once).
    lookIn(lifted ? Math.min(every, FASTEST_MS) : nextLookMs(grown, at - lastAt, every, restartAt))
    lastLog = log
    lastAt = at
  }
  lookIn(every)
  parentPort!.on('message', (m: unknown) => {
    // A bulk writer at work (WriterHold.writing): a look soon, not a second away.
    if (m === 'soon' && dueAt - performance.now() > FASTEST_MS) lookIn(FASTEST_MS)
    if (m !== 'stop') return
    clearTimeout(timer)
    db.close()
    parentPort!.close()
  })
  parentPort!.postMessage({ ready: true })
} else if (mode === 'backup') {
  // An online backup to `target`: SQLite copies the pages in steps on this thread, so the host
  // never waits for a read of the whole file.
  // Stopped between two steps when asked (the runtime's close): terminating the thread in the
  // middle of one crashed the whole process (better-sqlite3 throwing into a dying isolate).
  let stopping = false
  parentPort!.on('message', (m: unknown) => {
    if (m === 'stop') stopping = true
  })
  // A backup or a deferred check reads the whole file, and nobody waits for it: it takes what the
  // cores leave (lowerThisThread). Copying a 0.69 GB database at the host's priority, 15 s after
  // start, doubled what an open window spent per turn and made a prompt's first delta 0.8-1.1 ms
  // slower meanwhile (npm run bench -- --full --only=wire). The checkpoint thread is not lowered:
  // starved, the log it copies back grows until a commit on the event loop has to do it.
  void lowerThisThread()
    .then(() =>
      // One snapshot, never started again by the app's writes (snapshotBackup).
      snapshotBackup(db, target!, () => {
        if (stopping) throw new Error('the backup was stopped (Arbor is closing)')
      }),
    )
    .then(
      () => parentPort!.postMessage({ done: true }),
      (err: unknown) => parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) }),
    )
    .finally(() => {
      db.close()
      parentPort!.close()
    })
} else if (mode === 'check') {
  // The deferred integrity check of a large database: one answer, then the thread ends.
  // At the least priority too, as a backup (above).
  void lowerThisThread().then(() => {
    try {
      parentPort!.postMessage({ problems: quickCheck(db) })
    } catch (err) {
      parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) })
    }
    db.close()
  })
} else {
  const search = prepareSearch(db)
  // Searches go to this thread from now on (until now they ran on the host's connection).
  parentPort!.postMessage({ ready: true })
  parentPort!.on('message', (req: { id: number; query: string; limit: number }) => {
    try {
      parentPort!.postMessage({ id: req.id, hits: search(req.query, req.limit) })
    } catch (err) {
      parentPort!.postMessage({ id: req.id, error: err instanceof Error ? err.message : String(err) })
    }
  })
}
