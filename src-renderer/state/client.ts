import { useCallback, useContext, useEffect, useRef, useState } from 'react'
import type { RemoteArbor } from '../../src-shared/sdk'
import { AppContext } from './hooks'

/**
 * The SDK, for forms that talk to main directly and show their own errors: its `call` reaches
 * the non-session methods (settings, providers, MCP servers, app info).
 */
export function useArbor(): RemoteArbor {
  const app = useContext(AppContext)
  if (!app) throw new Error('AppContext is missing')
  return app.arbor
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * Data a settings form loads from main, with the form's error line: `reload()` fetches again,
 * and `act(fn)` runs a change, reloads, and shows its failure instead of throwing.
 */
export function useHostData<T>(fetch: (arbor: RemoteArbor) => Promise<T>) {
  const arbor = useArbor()
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<string | null>(null)
  const fetchRef = useRef(fetch)
  const reload = useCallback(async () => {
    try {
      setData(await fetchRef.current(arbor))
    } catch (err) {
      setError(errorText(err))
    }
  }, [arbor])
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
  return { arbor, data, error, setError, reload, act }
}
