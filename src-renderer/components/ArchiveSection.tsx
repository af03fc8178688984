import { useState } from 'react'
import { useActions, useApp } from '../state/hooks'
import { Confirm } from './Modal'

/** Archived sessions, folded away at the bottom of the sidebar: reopen, unarchive, remove. */
export function ArchiveSection() {
  const archived = useApp((s) => s.archived)
  const openId = useApp((s) => s.transcript?.session_id ?? null)
  const actions = useActions()
  const [open, setOpen] = useState(false)
  const [confirmAll, setConfirmAll] = useState(false)

  const toggle = () => {
    if (!open) void actions.loadArchived()
    setOpen((o) => !o)
  }

  return (
    <section className="archive" aria-label="Archive">
      <button type="button" className="archive-toggle" aria-expanded={open} onClick={toggle}>
        <span aria-hidden="true">{open ? '▾' : '▸'}</span> Archived
        {archived && archived.length > 0 && <span className="count">{archived.length}</span>}
      </button>
      {open && archived !== null && (
        <>
          {archived.length === 0 ? (
            <p className="sidebar-empty">Nothing archived.</p>
          ) : (
            <ul className="archive-list" aria-label="Archived sessions">
              {archived.map((s) => (
                <li
                  key={s.session_id}
                  className={`archive-item${s.session_id === openId ? ' selected' : ''}`}
                >
                  <a
                    href={`#/s/${s.session_id}`}
                    className="session-open"
                    onClick={(e) => {
                      e.preventDefault()
                      void actions.openSession(s.session_id)
                    }}
                  >
                    <span className="session-title">{s.title}</span>
                  </a>
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-label={`Unarchive ${s.title}`}
                    onClick={() => void actions.archive(s.session_id, false)}
                  >
                    Unarchive
                  </button>
                </li>
              ))}
            </ul>
          )}
          {archived.length > 0 && (
            <button
              type="button"
              className="btn btn-small btn-danger archive-clean"
              onClick={() => setConfirmAll(true)}
            >
              Remove all archived…
            </button>
          )}
        </>
      )}
      {confirmAll && (
        <Confirm
          title="Remove all archived chats?"
          message={`${archived?.length ?? 0} archived chats and their history are removed for good.`}
          confirm="Remove all"
          danger
          onConfirm={() => void actions.cleanArchive()}
          onCancel={() => setConfirmAll(false)}
        />
      )}
    </section>
  )
}
