import { useEffect } from 'react'
import { matchShortcut, SHORTCUTS } from '../lib/shortcuts'
import { useActions, useAppStore } from '../state/hooks'
import { COMPOSER_ID } from './Composer'
import { Modal } from './Modal'
import { SEARCH_ID } from './Search'

/** Global keyboard shortcuts (see lib/shortcuts.ts). Renders nothing. */
export function ShortcutKeys() {
  const actions = useActions()
  const store = useAppStore()

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const id = matchShortcut(e, e.target)
      if (!id) return
      const state = store.getState()
      // A modal takes the keys; Esc closes it even when the focus fell outside it.
      if (state.dialog) {
        if (id === 'stop') actions.setDialog(null)
        if (id !== 'help' && id !== 'stop') return
      }
      switch (id) {
        case 'stop':
          if (state.dialog) break
          // Only a running turn: a turn waiting for an approval is answered, not cancelled by a stray Esc.
          if (state.transcript?.info?.state !== 'running' || e.defaultPrevented) return
          void actions.stop()
          break
        case 'new':
          // The composer focuses itself when the new chat opens.
          void actions.newChat()
          break
        case 'search': {
          const el = document.getElementById(SEARCH_ID) as HTMLInputElement | null
          el?.focus()
          el?.select()
          break
        }
        case 'next':
        case 'prev':
          void actions.openRelative(id === 'next' ? 1 : -1)
          break
        case 'composer':
          document.getElementById(COMPOSER_ID)?.focus()
          break
        case 'history':
          actions.setPanel(state.panel === 'history' ? null : 'history')
          break
        case 'sidebar':
          actions.setSidebar(!state.sidebar)
          break
        case 'settings':
          actions.setDialog('settings')
          break
        case 'help':
          actions.setDialog(state.dialog === 'shortcuts' ? null : 'shortcuts')
          break
      }
      e.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [actions, store])

  return null
}

/** The shortcuts help. */
export function ShortcutsHelp() {
  const { setDialog } = useActions()
  return (
    <Modal title="Keyboard shortcuts" onClose={() => setDialog(null)} className="modal-small">
      <table className="shortcuts">
        <tbody>
          {SHORTCUTS.map((s) => (
            <tr key={s.id}>
              <td>{s.label}</td>
              <td>
                <kbd>{s.keys}</kbd>
              </td>
            </tr>
          ))}
          <tr>
            <td>Send · new line</td>
            <td>
              <kbd>Enter</kbd> · <kbd>Shift+Enter</kbd>
            </td>
          </tr>
          <tr>
            <td>Approve once (approval focused)</td>
            <td>
              <kbd>Enter</kbd>
            </td>
          </tr>
          <tr>
            <td>Deny an approval (asks first)</td>
            <td>
              <kbd>Esc</kbd>
            </td>
          </tr>
        </tbody>
      </table>
    </Modal>
  )
}
