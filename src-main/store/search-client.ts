import { existsSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { ArborError } from '../../src-shared/errors'
import type { SearchHit } from '../../src-shared/types'

export interface SearchService {
  search(query: string, limit: number): Promise<SearchHit[]>
  close(): Promise<void>
}

/**
 * Searches in a worker thread over its own read-only connection to `dbPath`. If the worker
 * cannot start or dies, searches fall back to `inProcess` (the store's own connection), so
 * search keeps working; the worker is started again at the next search.
 */
export function searchService(
  dbPath: string,
  script: string | null,
  inProcess: (query: string, limit: number) => SearchHit[],
  log: (message: string) => void,
): SearchService {
  let worker: Worker | null = null
  let nextId = 1
  const pending = new Map<number, { resolve: (h: SearchHit[]) => void; reject: (e: Error) => void }>()
  const usable = script !== null && existsSync(script)

  const start = (): Worker | null => {
    if (!usable) return null
    if (worker) return worker
    const w = new Worker(script!, { workerData: { path: dbPath } })
    w.unref()
    w.on('message', (msg: { id: number; hits?: SearchHit[]; error?: string }) => {
      const p = pending.get(msg.id)
      if (!p) return
      pending.delete(msg.id)
      if (msg.error !== undefined) p.reject(new ArborError('store_error', `Search failed: ${msg.error}`))
      else p.resolve(msg.hits ?? [])
    })
    const lost = (why: string) => {
      if (worker !== w) return
      worker = null
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

  return {
    async search(query, limit) {
      const w = start()
      if (!w) return inProcess(query, limit)
      const id = nextId++
      try {
        return await new Promise<SearchHit[]>((resolve, reject) => {
          pending.set(id, { resolve, reject })
          w.postMessage({ id, query, limit })
        })
      } catch (err) {
        if (err instanceof ArborError) throw err
        return inProcess(query, limit)
      }
    },
    async close() {
      const w = worker
      worker = null
      if (w) await w.terminate()
    },
  }
}
