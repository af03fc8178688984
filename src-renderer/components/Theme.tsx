import { useEffect } from 'react'
import { useApp } from '../state/hooks'

/** Applies the theme setting to the document: light, dark, or the system's choice. */
export function ThemeSync() {
  const theme = useApp((s) => s.settings?.theme ?? 'system')
  useEffect(() => {
    const root = document.documentElement
    if (theme === 'system') delete root.dataset.theme
    else root.dataset.theme = theme
  }, [theme])
  return null
}
