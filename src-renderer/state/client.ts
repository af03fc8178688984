import { useContext } from 'react'
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
