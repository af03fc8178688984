import { useCallback, useContext, useEffect, useRef, useState } from 'react'
import type { ArborClient } from '../../src-shared/client'
import { AppContext } from './hooks'

/** The typed client, for forms that talk to main directly and show their own errors. */
export function useClient(): ArborClient {
  const app = useContext(AppContext)
  if (!app) throw new Error('AppContext is missing')
  return app.client
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * Data a settings form loads from main, with the form's error line: `reload()` fetches again,
 * and `act(fn)` runs a change, reloads, and shows its failure instead of throwing.
 */
export function useHostData<T>(fetch: (client: ArborClient) => Promise<T>) {
  const client = useClient()
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<string | null>(null)
  const fetchRef = useRef(fetch)
  const reload = useCallback(async () => {
    try {
      setData(await fetchRef.current(client))
    } catch (err) {
      setError(errorText(err))
    }
  }, [client])
  useEffect(() => {
    void reload()
  }, [reload])
  const act = useCallback(
    async (change: () => Promise<unknown>) => {
      try {
        await change()
        await reload()
      } catch (err) {
        setError(errorText(err))
      }
    },
    [reload],
  )
  return { client, data, error, setError, reload, act }
}
