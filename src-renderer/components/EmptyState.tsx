import { useApp } from '../state/hooks'
import { ConnectModelCard } from './ConnectModelCard'

/** The scripted model's id (SCRIPTED_MODEL_ID in src-main/runtime/models/scripted.ts). */
const SCRIPTED = 'scripted'

/**
 * Shown in an empty conversation. Until a real model is connected it says that the default
 * one is a script and offers to connect one; after that it only says how to start.
 */
export function EmptyState() {
  const app = useApp((s) => s.app)
  const realModel = app?.models.some((m) => m.id !== SCRIPTED) ?? false
  return (
    <div className="empty-state">
      <h2>Start a conversation</h2>
      {app && !realModel ? (
        <ConnectModelCard />
      ) : (
        <p>
          Type a message below; pick the model in the chat’s header. The scripted model there is a script, not
          an AI: it understands <code>/stream 50</code>,{' '}
          <code>/tool write_file {'{"path":"a.txt","content":"hi"}'}</code> and <code>/error boom</code>.
        </p>
      )}
    </div>
  )
}
