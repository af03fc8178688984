/**
 * The app's keyboard shortcuts, one table for the handler and the help dialog. "Mod" is Cmd on
 * macOS and Ctrl elsewhere. Chosen to work in a browser tab too, where Ctrl+N / Ctrl+T / Ctrl+W
 * belong to the browser.
 */
export type ShortcutId =
  'new' | 'search' | 'next' | 'prev' | 'composer' | 'stop' | 'history' | 'sidebar' | 'settings' | 'help'

export interface Shortcut {
  id: ShortcutId
  keys: string
  label: string
}

export const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform)
const MOD = isMac ? '⌘' : 'Ctrl'

export const SHORTCUTS: Shortcut[] = [
  { id: 'new', keys: `${MOD}+Shift+O`, label: 'New chat' },
  { id: 'search', keys: `${MOD}+K`, label: 'Search all messages' },
  { id: 'next', keys: 'Alt+↓', label: 'Next session' },
  { id: 'prev', keys: 'Alt+↑', label: 'Previous session' },
  { id: 'composer', keys: '/', label: 'Focus the message box' },
  { id: 'stop', keys: 'Esc', label: 'Stop the running turn' },
  { id: 'history', keys: `${MOD}+Shift+H`, label: 'Show or hide history' },
  { id: 'sidebar', keys: `${MOD}+Shift+S`, label: 'Show or hide the chat list' },
  { id: 'settings', keys: `${MOD}+,`, label: 'Settings' },
  { id: 'help', keys: `${MOD}+/`, label: 'This list of shortcuts' },
]

type KeyLike = Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey'>

/** Whether `target` takes typed text (a field, a list box, an editable element). */
export function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)
}

/** Which shortcut a key press is, if any (`target` decides whether bare keys count). */
export function matchShortcut(e: KeyLike, target: EventTarget | null, mac = isMac): ShortcutId | null {
  const mod = mac ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key
  if (mod && e.shiftKey && !e.altKey && key === 'o') return 'new'
  if (mod && !e.shiftKey && !e.altKey && key === 'k') return 'search'
  if (mod && e.shiftKey && !e.altKey && key === 'h') return 'history'
  if (mod && e.shiftKey && !e.altKey && key === 's') return 'sidebar'
  if (mod && !e.shiftKey && !e.altKey && key === ',') return 'settings'
  if (mod && !e.altKey && (key === '/' || key === '?')) return 'help'
  if (e.altKey && !mod && !e.shiftKey && key === 'ArrowDown') return 'next'
  if (e.altKey && !mod && !e.shiftKey && key === 'ArrowUp') return 'prev'
  if (!mod && !e.altKey && !e.ctrlKey && !e.metaKey && !typing(target)) {
    if (key === '/') return 'composer'
    if (key === '?') return 'help'
  }
  if (key === 'Escape' && !mod && !e.altKey && !e.shiftKey) return 'stop'
  return null
}
