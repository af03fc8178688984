import { ArborError } from '../../src-shared/errors'
import type { Store } from './types'

/**
 * Storage failures, said the way a user can act on them. SQLite reports a full disk as
 * SQLITE_FULL, a failed write as SQLITE_IOERR_*, a file it may not write as SQLITE_READONLY;
 * Node's fs as ENOSPC, EIO, EFBIG (a file-size limit) or EROFS.
 */
export function storageProblem(err: unknown, dataDir: string): ArborError | null {
  if (err instanceof ArborError) return null
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return null
  const safe = 'your conversation is safe up to here, and Arbor continues once it can write again.'
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EFBIG' || code === 'SQLITE_IOERR_WRITE_FULL')
    return new ArborError(
      'store_error',
      `The disk holding ${dataDir} is full (or its size limit is reached) — free some space; ${safe}`,
    )
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO')
    return new ArborError(
      'store_error',
      `Arbor could not write to ${dataDir} (a disk I/O error, or a limit on file size) — check that disk and the limits Arbor runs under; ${safe}`,
    )
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS')
    return new ArborError(
      'store_error',
      `Arbor may no longer write to ${dataDir} (it became read-only) — make it writable again; ${safe}`,
    )
  return null
}

/**
 * The store as the runtime uses it: every call that fails for a storage reason throws one
 * canonical ArborError naming the cause and the folder, instead of SQLite's own words.
 */
export function withStorageErrors(store: Store, dataDir: string): Store {
  // Wrapped once per method, not on every call: the store is on every hot path.
  const wrapped = new Map<PropertyKey, unknown>()
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      let fn = wrapped.get(prop)
      if (!fn) {
        fn = (...args: unknown[]) => {
          try {
            return (value as (...a: unknown[]) => unknown).apply(target, args)
          } catch (err) {
            throw storageProblem(err, dataDir) ?? err
          }
        }
        wrapped.set(prop, fn)
      }
      return fn
    },
  })
}
