import { existsSync } from 'node:fs'
import type { SearchIndexProgress } from '../../src-shared/contract'
import type { Store } from '../store'
import { backupWith, listBackups, type BackupInfo } from '../store/backup'
import { holdForCheckpoint, RETRY_WRITE_MS, type WriterHold } from '../store/checkpoint-pace'
import { backupOnThread, integrityCheck } from '../store/search-client'
import { damageMessage } from '../store/sqlite/db'
import { discardImport } from './transfer'
import { TRASH_PURGE_EVERY_MS } from './trash'

/** How often Arbor backs up a database in use. */
const BACKUP_EVERY_MS = 6 * 60 * 60 * 1000
const STARTUP_BACKUP_DELAY_MS = 15_000
/**
 * A database too large to check at open is checked this long after it: not during start-up,
 * where its reading of the whole file competes with the first paint, the first page and the
 * search worker's start (the first search came ~40 ms later with the check beside it).
 */
const STARTUP_CHECK_DELAY_MS = 3000

export interface UpkeepOptions {
  store: Store
  dataDir: string
  kind: 'sqlite' | 'memory'
  /** Whether arbor.db was there before this start (a new one needs no backup yet). */
  existed: boolean
  /** The built worker script (checks and backups run on a thread of their own), if there is one. */
  workerScript: string | null
  /** Deletes what has been 30 days in the Trash. */
  purgeTrash: () => void
  /** The checkpoint thread's request that bulk writers hold their next chunk (holdForCheckpoint). */
  holdWriters: WriterHold
  log: (message: string) => void
  checkDelayMs?: number
}

export interface Upkeep {
  /** How far the full-text backlog is indexed (messages.id), and whether it is done. */
  searchIndex(): SearchIndexProgress
  /** Called as the backlog is indexed (at most every 250 ms, and once when it is done). */
  onSearchIndex(listener: (progress: SearchIndexProgress) => void): () => void
  /** What the deferred integrity check of a large database found wrong, if anything. */
  storageProblem(): string | null
  onStorageProblem(listener: (message: string) => void): () => void
  /** The automatic and manual backups of arbor.db, newest first. */
  backups(): BackupInfo[]
  backupNow(): Promise<BackupInfo>
  /**
   * Ends the timers, the check and any backup being copied (the runtime's close); resolves once
   * a backup thread has stopped (the database may then be closed, the process may exit).
   */
  stop(): Promise<void>
}

/**
 * What an open runtime does on its own, besides the chats: emptying the Trash, indexing the
 * full-text backlog of an older database, the deferred integrity check of a large one, and
 * automatic backups. Each runs in small steps or on a thread of its own, never holding the
 * event loop for long; `stop()` ends them all (the runtime's close).
 */
export function startUpkeep(o: UpkeepOptions): Upkeep {
  const { store, dataDir, log, workerScript } = o
  let stopped = false

  // Chats 30 days in the Trash go at start-up, then hourly (each in its own transaction).
  const purge = () => {
    try {
      o.purgeTrash()
    } catch (err) {
      log(`emptying old chats from the Trash failed, retried in an hour: ${String(err)}`)
    }
  }
  purge()
  const purgeTimer = setInterval(purge, TRASH_PURGE_EVERY_MS)
  purgeTimer.unref()

  // Imports cut short (by a crash, or a disk that failed even their clean-up) are deleted, a
  // chunk of messages per turn of the event loop. Nothing showed them meanwhile.
  const discardUnfinished = async () => {
    for (const { import_id } of store.unfinishedImports())
      await discardImport(store, import_id, () => stopped, o.holdWriters)
  }
  discardUnfinished().catch((err: unknown) => {
    if (!stopped) log(`deleting an unfinished import failed, tried again at the next start: ${String(err)}`)
  })

  /**
   * A bulk writer of the upkeep: `chunk` in one transaction each turn of the event loop, then
   * `more(its answer)` after the commit, until that is false. It holds its next chunk while the
   * checkpoint thread asks; the write lock taken (the thread restarting or starting the log
   * again) is tried again shortly; a failure is logged and tried again in 5 s.
   */
  const inChunks = <T>(what: string, chunk: () => T, more: (value: T) => boolean) => {
    const step = () => {
      if (stopped) return
      try {
        const done = store.tryTransaction(chunk)
        if (!done) return void setTimeout(step, RETRY_WRITE_MS).unref()
        if (!more(done.value)) return
        if (o.holdWriters.asked()) void holdForCheckpoint(o.holdWriters).then(step)
        else {
          o.holdWriters.writing()
          setTimeout(step, 0).unref()
        }
      } catch (err) {
        log(`${what} paused: ${String(err)}`)
        setTimeout(step, 5000).unref()
      }
    }
    return step
  }

  // The full-text backlog of a database written before search was indexed at write time is
  // indexed in small chunks (500 rows or ~5 ms), one event-loop turn each: search works
  // (partially) at once, and nothing waits for it.
  const searchIndex = { indexed_upto: 0, total: 0 }
  const progress = (): SearchIndexProgress => ({
    ...searchIndex,
    done: searchIndex.indexed_upto >= searchIndex.total,
  })
  const indexListeners = new Set<(p: SearchIndexProgress) => void>()
  let lastProgressAt = 0
  inChunks(
    'indexing older messages for search',
    // At most 500 rows or ~5 ms per event-loop turn, whichever comes first (then a bounded merge
    // step and the commit: ~8 ms a chunk at the median, 12-18 ms at the 99th percentile here,
    // at 114,000 and at 1.1 M messages).
    () => store.indexBacklog(500, 5),
    (indexed) => {
      Object.assign(searchIndex, indexed)
      const p = progress()
      if (indexListeners.size > 0 && (p.done || Date.now() - lastProgressAt >= 250)) {
        lastProgressAt = Date.now()
        for (const l of [...indexListeners]) l(p)
      }
      return !p.done
    },
  )()

  // A message too long to index in its own write (long-texts.ts) is indexed just after, in
  // pieces of a few ms, one event-loop turn each, as the backlog is: woken by each write that
  // queues one, and at start for any a crash or a close left queued.
  let indexingLong = false
  const longStep = inChunks(
    'indexing a long message for search',
    () => store.indexLongTexts(5),
    (left) => (indexingLong = left),
  )
  const indexLong = () => {
    if (indexingLong || stopped) return
    indexingLong = true
    // After the write that queued it has committed.
    setImmediate(longStep)
  }
  const offLongTexts = store.onLongTextQueued(indexLong)
  indexLong()

  // A database too large to check at open is checked soon after, on a worker thread of its own.
  let storageProblem: string | null = null
  const problemListeners = new Set<(message: string) => void>()
  const check = store.checkDeferred
    ? integrityCheck(
        store.path,
        workerScript,
        () => store.quickCheck(),
        o.checkDelayMs ?? STARTUP_CHECK_DELAY_MS,
      )
    : null
  check?.result
    .then((problems) => {
      if (stopped || problems.length === 0) return
      storageProblem = damageMessage(store.path, problems, true)
      log(storageProblem)
      for (const l of [...problemListeners]) l(storageProblem)
    })
    .catch((err: unknown) => log(`the integrity check could not run: ${String(err)}`))

  // Automatic backups: soon after start when the newest is older than a day, then every six
  // hours. Made on a thread of their own where the built worker exists (copying a large file
  // in steps on the event loop would stall every stream for its length).
  const threaded = workerScript !== null && existsSync(workerScript)
  const copying = new Set<() => Promise<void>>()
  const onThread = (tmp: string) => {
    const copy = backupOnThread(store.path, workerScript!, tmp)
    copying.add(copy.stop)
    return copy.result.finally(() => copying.delete(copy.stop))
  }
  const backup = async (reason: string): Promise<BackupInfo> => {
    const name = threaded ? await backupWith(dataDir, reason, onThread) : await store.backup(reason)
    return listBackups(dataDir).find((b) => b.name === name)!
  }
  const scheduled = () => {
    backup('scheduled').catch((err: unknown) => log(`automatic backup failed: ${String(err)}`))
  }
  const newest = o.existed ? listBackups(dataDir)[0] : undefined
  // Not at the very start: the first paint and the first prompt do not share the disk with it.
  if (o.existed && (!newest || Date.now() - newest.created_at > BACKUP_EVERY_MS * 4))
    setTimeout(() => {
      if (!stopped) scheduled()
    }, STARTUP_BACKUP_DELAY_MS).unref()
  const backupTimer = o.kind === 'sqlite' ? setInterval(scheduled, BACKUP_EVERY_MS) : null
  backupTimer?.unref()

  return {
    searchIndex: progress,
    onSearchIndex(listener) {
      indexListeners.add(listener)
      return () => indexListeners.delete(listener)
    },
    storageProblem: () => storageProblem,
    onStorageProblem(listener) {
      problemListeners.add(listener)
      return () => problemListeners.delete(listener)
    },
    backups: () => (o.kind === 'sqlite' ? listBackups(dataDir) : []),
    backupNow: () => backup('manual'),
    stop() {
      stopped = true
      offLongTexts()
      if (backupTimer) clearInterval(backupTimer)
      clearInterval(purgeTimer)
      check?.stop()
      // A copy cut short leaves only its .partial file, which backupWith removes.
      return Promise.all([...copying].map((stop) => stop())).then(() => undefined)
    },
  }
}
