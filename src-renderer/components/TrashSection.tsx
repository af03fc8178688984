import { useState } from 'react'
import { useActions, useApp } from '../state/hooks'
import { Confirm } from './Modal'

const day = (t: number) => new Date(t).toLocaleDateString(undefined, { dateStyle: 'medium' })

/**
 * Removed chats, folded away at the bottom of the sidebar: each says when it is deleted for
 * good (30 days after it was removed), with Restore; Empty trash deletes them all now.
 */
export function TrashSection() {
  const trashed = useApp((s) => s.trashed)
  const actions = useActions()
  const [open, setOpen] = useState(false)
  const [confirmEmpty, setConfirmEmpty] = useState(false)

  const toggle = () => {
    if (!open) void actions.loadTrashed()
    setOpen((o) => !o)
  }

  return (
    <section className="archive trash" aria-label="Trash">
      <button type="button" className="archive-toggle" aria-expanded={open} onClick={toggle}>
        <span aria-hidden="true">{open ? '▾' : '▸'}</span> Trash
        {trashed && trashed.length > 0 && <span className="count">{trashed.length}</span>}
      </button>
      {open && trashed !== null && (
        <>
          {trashed.length === 0 ? (
            <p className="sidebar-empty">The Trash is empty. Removed chats wait here for 30 days.</p>
          ) : (
            <ul className="archive-list" aria-label="Chats in the Trash">
              {trashed.map((s) => (
                <li key={s.session_id} className="archive-item trash-item">
                  <span className="trash-text">
                    <span className="session-title">{s.title || 'New chat'}</span>
                    <span className="trash-when" title={new Date(s.delete_at).toLocaleString()}>
                      Deleted on {day(s.delete_at)}
                    </span>
                  </span>
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-label={`Restore ${s.title || 'New chat'}`}
                    onClick={() => void actions.restoreSession(s.session_id)}
                  >
                    Restore
                  </button>
                </li>
              ))}
            </ul>
          )}
          {trashed.length > 0 && (
            <button
              type="button"
              className="btn btn-small btn-danger archive-clean"
              onClick={() => setConfirmEmpty(true)}
            >
              Empty trash…
            </button>
          )}
        </>
      )}
      {confirmEmpty && (
        <Confirm
          title="Empty the Trash?"
          message={`${trashed?.length ?? 0} ${trashed?.length === 1 ? 'chat is' : 'chats are'} deleted for good, with their history. Forks made from them stay. This cannot be undone.`}
          confirm="Empty trash"
          danger
          onConfirm={() => void actions.emptyTrash()}
          onCancel={() => setConfirmEmpty(false)}
        />
      )}
    </section>
  )
}
