import { useActions, useApp } from '../state/hooks'

const PREFIX = /^Prompt:\s*/

/** Commands waiting for the running turn to end; each can be withdrawn before it starts. */
export function QueueList() {
  const queue = useApp((s) => s.transcript?.info?.queue)
  const { unqueue } = useActions()
  if (!queue || queue.length === 0) return null
  return (
    <ul className="queue" aria-label="Queued">
      {queue.map((c) => {
        const text = c.kind === 'prompt' ? c.summary.replace(PREFIX, '') : c.summary
        return (
          <li key={c.command_id} className="queue-item" data-kind={c.kind}>
            <span className="queue-badge">Queued</span>
            <span className="queue-text" title={text}>
              {text}
            </span>
            <button
              type="button"
              className="icon-btn"
              aria-label={`Remove queued ${c.kind}: ${text}`}
              title="Remove from queue"
              onClick={() => void unqueue(c.command_id)}
            >
              ×
            </button>
          </li>
        )
      })}
    </ul>
  )
}
