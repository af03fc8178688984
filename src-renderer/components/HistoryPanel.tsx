import { memo, useEffect, useMemo, useState } from 'react'
import type { SnapshotInfo } from '../../src-shared/types'
import { checkpointLabel, describeChange, type MessagesBetween } from '../lib/history'
import { useActions, useApp } from '../state/hooks'
import { BranchIcon } from './Icons'

// One formatter each, made once: `toLocaleTimeString(locales, options)` builds a formatter per
// call, and a panel of 200 checkpoints redrawn as a reply streamed spent most of its time there.
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' })
const DAY_CLOCK = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
})

/** A time of today as a clock time, any other with its day. `today`: when today started. */
function time(ms: number, today: number): string {
  const tomorrow = new Date(today).setDate(new Date(today).getDate() + 1)
  return ms >= today && ms < tomorrow ? CLOCK.format(ms) : DAY_CLOCK.format(ms)
}

const startOfToday = () => new Date().setHours(0, 0, 0, 0)

/** One checkpoint: drawn again only when it, or what it says changed, does. */
const Checkpoint = memo(function Checkpoint({
  snap,
  change,
  today,
  onFork,
}: {
  snap: SnapshotInfo
  change: string
  today: number
  onFork: (snapshot_id: string) => void
}) {
  return (
    <li className="checkpoint" aria-label={`Checkpoint at message ${snap.head_seq}`}>
      <div className="checkpoint-line">
        <span className="checkpoint-time">{time(snap.created_at, today)}</span>
        <span className="checkpoint-reason">{checkpointLabel(snap)}</span>
      </div>
      <div className="checkpoint-change">{change}</div>
      <div className="checkpoint-foot">
        <code className="checkpoint-hash" title={`sha256 ${snap.hash}`}>
          {snap.hash.slice(0, 10)}
        </code>
        <button type="button" className="btn btn-small" onClick={() => onFork(snap.snapshot_id)}>
          Fork from here
        </button>
      </div>
    </li>
  )
})

/**
 * A session's history: where it came from, the forks made from it, and its checkpoints (when,
 * which step, what changed). Any checkpoint can be forked, any fork opened.
 */
export function HistoryPanel() {
  const info = useApp((s) => s.transcript?.info ?? null)
  const messages = useApp((s) => s.transcript?.messages)
  const sessions = useApp((s) => s.sessions)
  const archived = useApp((s) => s.archived)
  const actions = useActions()
  // With the chat they belong to: another chat's list is never shown while this one's loads.
  const [loaded, setLoaded] = useState<{ session_id: string; list: SnapshotInfo[] } | null>(null)
  const sessionId = info?.session_id
  const snapshots = loaded && loaded.session_id === sessionId ? loaded.list : null
  // Reload the checkpoints when the session moves on (a new message, a finished step).
  const version = `${sessionId}:${info?.updated_at}:${info?.message_count}:${info?.state}`

  useEffect(() => {
    if (!sessionId) return
    let live = true
    void actions.snapshots(sessionId).then((list) => {
      if (live) setLoaded({ session_id: sessionId, list })
    })
    return () => {
      live = false
    }
  }, [sessionId, version, actions])

  const forks = useMemo(
    () =>
      [...sessions, ...(archived ?? [])]
        .filter((s) => s.parent?.parent_session_id === sessionId)
        .sort((a, b) => b.created_at - a.created_at),
    [sessions, archived, sessionId],
  )
  // What each checkpoint added, from the loaded messages: computed again as the transcript
  // changes (a streamed frame: a few lookups per checkpoint), but a row whose text is the same
  // is not drawn again.
  const changes = useMemo(() => {
    if (!snapshots) return []
    const between: MessagesBetween = (from, to, max) => messages?.inSeqRange(from, to, max) ?? []
    return snapshots.map((snap, i) => describeChange(snap, snapshots[i + 1], between))
  }, [snapshots, messages])
  const fork = actions.fork
  const onFork = useMemo(() => (snapshot_id: string) => void fork({ snapshot_id }), [fork])
  const today = startOfToday()

  if (!info) return null
  const parent = info.parent
  const parentInfo = parent ? sessions.find((s) => s.session_id === parent.parent_session_id) : undefined

  return (
    <aside className="history" aria-label="History">
      <header className="history-head">
        <h2>History</h2>
        <button
          type="button"
          className="icon-btn"
          aria-label="Close history"
          onClick={() => actions.setPanel(null)}
        >
          ×
        </button>
      </header>
      <div className="history-body">
        {parent && (
          <section className="history-section" aria-label="Forked from">
            <h3>Forked from</h3>
            <button
              type="button"
              className="history-row link-row"
              onClick={() => void actions.openSession(parent.parent_session_id)}
            >
              <span className="row-title">{parentInfo?.title ?? 'Parent session'}</span>
              <span className="row-meta">at message {parent.fork_seq}</span>
            </button>
          </section>
        )}

        <section className="history-section" aria-label="Forks">
          <h3>Forks {forks.length > 0 && <span className="count">{forks.length}</span>}</h3>
          {forks.length === 0 ? (
            <p className="history-empty">No forks yet. Use “Fork from here” on a message or a checkpoint.</p>
          ) : (
            <ul className="history-list">
              {forks.map((f) => (
                <li key={f.session_id}>
                  <button
                    type="button"
                    className="history-row link-row"
                    aria-label={`Open fork ${f.title}`}
                    onClick={() => void actions.openSession(f.session_id)}
                  >
                    <span className="row-title">
                      <BranchIcon /> {f.title}
                    </span>
                    <span className="row-meta">
                      from message {f.parent?.fork_seq} · {time(f.created_at, today)}
                      {f.archived ? ' · archived' : ''}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>

        <section className="history-section" aria-label="Checkpoints">
          <h3>
            Checkpoints{' '}
            {snapshots && snapshots.length > 0 && <span className="count">{snapshots.length}</span>}
          </h3>
          {snapshots === null ? (
            <p className="history-empty">Loading…</p>
          ) : snapshots.length === 0 ? (
            <p className="history-empty">No checkpoints yet: one is taken at every model step.</p>
          ) : (
            <ol className="history-list checkpoints">
              {snapshots.map((snap, i) => (
                <Checkpoint
                  key={snap.snapshot_id}
                  snap={snap}
                  change={changes[i]!}
                  today={today}
                  onFork={onFork}
                />
              ))}
            </ol>
          )}
        </section>
      </div>
    </aside>
  )
}
