import { createContext, useContext } from 'react'
import { useStore } from 'zustand'
import type { SecurityMode } from '../../src-shared/types'
import type { Actions, App, AppState } from './store'

/** The app (store + actions) for the component tree; main.tsx provides it. */
export const AppContext = createContext<App | null>(null)

function useAppContext(): App {
  const app = useContext(AppContext)
  if (!app) throw new Error('AppContext is missing: render inside <AppContext value={app}>.')
  return app
}

/** Subscribes to a slice of the app state (re-renders only when the slice changes). */
export function useApp<T>(selector: (state: AppState) => T): T {
  return useStore(useAppContext().store, selector)
}

/** The store itself, for reading the current state inside effects and handlers. */
export function useAppStore(): App['store'] {
  return useAppContext().store
}

export function useActions(): Actions {
  return useAppContext().actions
}

/** A readable model name ("Scripted offline model") from `app.info`, else the id. */
export function useModelLabel(model: string | undefined): string {
  return useApp((s) => {
    if (!model) return ''
    return s.app?.models.find((m) => m.id === model)?.label ?? model
  })
}

export const SECURITY_LABELS: Record<SecurityMode, string> = {
  ask: 'Ask before every tool',
  auto_read: 'Auto-approve read-only tools',
  auto: 'Auto-approve all tools',
}
