import { existsSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { ArborError } from '../../src-shared/errors'
import type { SearchHit } from '../../src-shared/types'
import { NO_HOLD, type WriterHold } from './checkpoint-pace'
import type { LogCopier } from './types'

export interface SearchService {
  search(query: string, limit: number): Promise<SearchHit[]>
  /** Starts the worker and reads a little of the index, so the first real search waits for neither. */
  warm(): void
  /** Resolves once searches run on the worker (never, without one). */
  ready(): Promise<void>
  close(): Promise<void>
}

/**
 * Searches in a worker thread over its own read-only connection to `dbPath`. If the worker
 * cannot start or dies, searches fall back to `inProcess` (the store's own connection), so
 * search keeps working; the worker is started again at the next search. Until a started worker
 * has opened the database, searches run in process too: a new thread takes ~50 ms to start here
 * (more beside the others starting with the runtime), while a search takes a few.
 */
export function searchService(
  dbPath: string,
  script: string | null,
  inProcess: (query: string, limit: number) => SearchHit[],
  log: (message: string) => void,
): SearchService {
  let worker: Worker | null = null
  let nextId = 1
  type Answer = { hits?: SearchHit[] }
  const pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>()
  const usable = script !== null && existsSync(script)
  // Set when the running worker says it has opened the database; cleared when it stops.
  let ready = false
  const readyWaiters = new Set<() => void>()

  const start = (): Worker | null => {
    if (!usable) return null
    if (worker) return worker
    const w = new Worker(script!, { workerData: { path: dbPath } })
    w.unref()
    w.on('message', (msg: Answer & { id: number; error?: string; ready?: boolean }) => {
      if (msg.ready) {
        if (worker !== w) return
        ready = true
        for (const r of [...readyWaiters]) r()
        readyWaiters.clear()
        return
      }
      const p = pending.get(msg.id)
      if (!p) return
      pending.delete(msg.id)
      if (msg.error !== undefined) p.reject(new ArborError('store_error', `Search failed: ${msg.error}`))
      else p.resolve(msg)
    })
    const lost = (why: string) => {
      if (worker !== w) return
      worker = null
      ready = false
      log(`the search worker stopped (${why}); searching on the main thread until it starts again`)
      for (const [id, p] of pending) {
        pending.delete(id)
        p.reject(new Error('search worker stopped'))
      }
    }
    w.on('error', (err) => lost(String(err)))
    w.on('exit', (code) => lost(`exit ${code}`))
    worker = w
    return w
  }

  const ask = (w: Worker, req: object) =>
    new Promise<Answer>((resolve, reject) => {
      const id = nextId++
      pending.set(id, { resolve, reject })
      w.postMessage({ id, ...req })
    })

  return {
    warm() {
      const w = start()
      if (w) ask(w, { query: 'a', limit: 1 }).catch(() => {})
    },
    ready() {
      if (ready) return Promise.resolve()
      return new Promise((resolve) => readyWaiters.add(resolve))
    },
    async search(query, limit) {
      const w = start()
      if (!w || !ready) return inProcess(query, limit)
      try {
        return (await ask(w, { query, limit })).hits ?? []
      } catch (err) {
        if (err instanceof ArborError) throw err
        return inProcess(query, limit)
      }
    },

    async close() {
      const w = worker
      worker = null
      ready = false
      // Closed: searches will never run on a worker (ready() stays pending; nothing waits on it).
      readyWaiters.clear()
      if (w) await w.terminate()
    },
  }
}

/**
 * SQLite's quick_check of `dbPath` on a worker thread of its own (the search worker's script in
 * its check mode), so neither the event loop nor a search waits for it: on a large database it
 * reads every page for seconds. `stop()` does not wait for it (a native call cannot be cut
 * short); without the built script it runs in process. It starts `delayMs` from now.
 */
export function integrityCheck(
  dbPath: string,
  script: string | null,
  inProcess: () => string[],
  delayMs = 0,
): { result: Promise<string[]>; stop(): void } {
  let stopped = false
  let w: Worker | null = null
  const result = new Promise<string[]>((resolve, reject) => {
    setTimeout(() => {
      try {
        if (stopped) return resolve([])
        if (script === null || !existsSync(script)) return resolve(inProcess())
        const worker = new Worker(script, { workerData: { path: dbPath, mode: 'check' } })
        w = worker
        worker.unref()
        worker.once('message', (m: { problems?: string[]; error?: string }) =>
          m.error !== undefined ? reject(new Error(m.error)) : resolve(m.problems ?? []),
        )
        worker.once('error', reject)
        worker.once('exit', () => resolve([]))
      } catch (err) {
        // On a timer nobody would catch it: the caller hears of it as the check's failure.
        reject(err as Error)
      }
    }, delayMs).unref()
  })
  return {
    result,
    stop() {
      stopped = true
      void w?.terminate()
    },
  }
}

/** How often the checkpoint thread copies the write-ahead log back (ms). */
export const CHECKPOINT_EVERY_MS = 1000

/**
 * The log's length (pages) at which the checkpoint thread restarts it from its beginning (32 MB
 * of 4 KB pages). Below the store's backstop (twice this), which would checkpoint on the host.
 */
export const RESTART_PAGES = 8000

/**
 * A bulk writer wakes the checkpoint thread (WriterHold.writing) when it starts writing after this
 * long without a chunk: once per burst of writes. From there the thread paces its looks by how
 * fast the log grows; a wake per chunk would make it look every 50 ms however slowly the log
 * grew, each look that copies syncing both files.
 */
const QUIET_MS = 500

export interface CheckpointThread {
  /** How many times the thread has restarted the log so far. */
  restarts(): number
  /** What bulk writers hold their next chunk for (holdForCheckpoint). */
  writers: WriterHold
  close(): Promise<void>
}

/**
 * The write-ahead log copied back into `dbPath` on a thread of its own (the search worker's
 * script in its checkpoint mode, with its own connection). SQLite otherwise does it inside the
 * commit that makes the log long — every ~1,000 pages, a 20–30 ms stall of the host's event
 * loop for the copy and an fsync. The store's connection stops doing it (`autoCheckpoint`) once
 * the thread runs, but for a backstop, and does it again if the thread stops or is closed, so the
 * log never grows without bound. While the thread finds a reader keeping a long log from being
 * copied, the backstop is off too: it could copy nothing until the reader ends, and then the
 * whole log inside one commit, on the host's event loop (75-117 ms at a million messages when an
 * import met the deferred integrity check); the thread copies it then, looking every FASTEST_MS.
 * Without the built script nothing changes.
 */
export function checkpointThread(
  dbPath: string,
  script: string | null,
  autoCheckpoint: (who: LogCopier) => void,
  log: (message: string) => void,
  everyMs = CHECKPOINT_EVERY_MS,
  restartPages = RESTART_PAGES,
): CheckpointThread {
  if (script === null || !existsSync(script))
    return { close: async () => {}, restarts: () => 0, writers: NO_HOLD }
  const hold = new Int32Array(new SharedArrayBuffer(8))
  const w = new Worker(script, {
    workerData: { path: dbPath, mode: 'checkpoint', everyMs, restartPages, holdWriters: hold },
  })
  w.unref()
  let live = true
  const ended = new Promise<void>((resolve) => w.once('exit', () => resolve()))
  const lost = (why: string) => {
    if (!live) return
    live = false
    autoCheckpoint('commits')
    log(`the checkpoint thread stopped (${why}); commits copy the log back themselves again`)
  }
  let restarts = 0
  w.on('message', (m: { ready?: boolean; restarted?: boolean; pinned?: boolean; error?: string }) => {
    if (m.restarted) restarts++
    if (m.pinned !== undefined && live) autoCheckpoint(m.pinned ? 'thread' : 'backstop')
    else if (m.ready && live) autoCheckpoint('backstop')
    else if (m.error !== undefined) log(`a background checkpoint failed (tried again shortly): ${m.error}`)
  })
  // When a bulk writer last wrote a chunk (WriterHold.writing).
  let wroteAt = -Infinity
  w.on('error', (err) => lost(String(err)))
  w.on('exit', (code) => lost(`exit ${code}`))
  return {
    restarts: () => restarts,
    writers: {
      asked: () => live && Atomics.load(hold, 0) === 1,
      holding: (on) => void Atomics.add(hold, 1, on ? 1 : -1),
      writing: () => {
        const now = performance.now()
        if (live && now - wroteAt >= QUIET_MS) w.postMessage('soon')
        wroteAt = now
      },
    },
    async close() {
      if (!live) return
      live = false
      autoCheckpoint('commits')
      // Its connection closes before the store's, so the store's is the last one and checkpoints
      // (and removes) the log at close, as it always did.
      w.postMessage('stop')
      const late = setTimeout(() => void w.terminate(), 5000)
      await ended
      clearTimeout(late)
    },
  }
}

/**
 * An online backup of `dbPath` to `target` on a worker thread (`script`, the search worker's,
 * in its backup mode), so the host's event loop never steps through the copy of a large file.
 */
export function backupOnThread(
  dbPath: string,
  script: string,
  target: string,
): { result: Promise<void>; stop(): Promise<void> } {
  const w = new Worker(script, { workerData: { path: dbPath, mode: 'backup', target } })
  w.unref()
  const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()))
  const result = new Promise<void>((resolve, reject) => {
    w.once('message', (m: { done?: boolean; error?: string }) =>
      m.error !== undefined ? reject(new Error(m.error)) : resolve(),
    )
    w.once('error', reject)
    void exited.then(() => reject(new Error('the backup thread ended before the copy was complete')))
  })
  return {
    result,
    // Between two steps of the copy (terminating the thread in the middle of one crashed the
    // whole process); terminated only if it has not ended by itself soon. Resolves once it has.
    stop: () => {
      w.postMessage('stop')
      setTimeout(() => void w.terminate(), BACKUP_STOP_GRACE_MS).unref()
      return exited
    },
  }
}
/** How long a backup thread asked to stop has before it is terminated. */
const BACKUP_STOP_GRACE_MS = 3000
