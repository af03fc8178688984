import { useApp, useActions } from '../state/hooks'
import { versionsAt } from '../lib/versions'

/**
 * ‹ 2/3 › on a message whose exchange has other versions (edits of the prompt, regenerated
 * replies): each version is a fork made just before the prompt, so the arrows open that fork,
 * at this message. The fork tree (sidebar, History) shows the same forks.
 */
export function VersionSwitch({ seq }: { seq: number }) {
  // A string, so the message re-renders only when its versions change, not on every store change.
  const key = useApp((s) => {
    const info = s.transcript?.info
    const v = info ? versionsAt(info, seq, s.sessions) : null
    return v ? `${v.index}|${v.list.map((x) => x.session_id).join(',')}` : null
  })
  const { openVersion } = useActions()
  if (!key) return null
  const [at, ids] = key.split('|') as [string, string]
  const index = Number(at)
  const list = ids.split(',')
  const go = (i: number) => void openVersion(list[i]!, seq)
  return (
    <span className="versions" role="group" aria-label={`Version ${index + 1} of ${list.length}`}>
      <button
        type="button"
        className="msg-action-btn"
        aria-label="Previous version"
        disabled={index === 0}
        onClick={() => go(index - 1)}
      >
        ‹
      </button>
      <span className="versions-count">
        {index + 1}/{list.length}
      </span>
      <button
        type="button"
        className="msg-action-btn"
        aria-label="Next version"
        disabled={index === list.length - 1}
        onClick={() => go(index + 1)}
      >
        ›
      </button>
    </span>
  )
}
