import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react'
import type { SessionMessage } from '../../src-shared/types'
import { attachmentsOf } from '../lib/attachments'
import { copyText } from '../lib/clipboard'
import { AttachmentChips } from './Attachments'
import { useActions, useApp } from '../state/hooks'
import { BranchIcon, CopyIcon, EditIcon, RegenerateIcon } from './Icons'
import { VersionSwitch } from './Versions'

function textOf(message: SessionMessage): string {
  return message.parts
    .map((p) => (p.type === 'text' ? p.text : ''))
    .filter(Boolean)
    .join('\n\n')
}

/**
 * The small toolbar under a message (shown on hover or focus): fork the conversation from here,
 * copy the text, and for the user's own messages, edit-and-resend as a fork.
 */
export function MessageActions({ message, onEdit }: { message: SessionMessage; onEdit?: () => void }) {
  const { fork, notify, regenerate } = useActions()
  // A reply right after its prompt shares the prompt's versions (a regeneration forks before it).
  const promptSeq = useApp((s) => {
    if (message.role !== 'assistant' || !message.turn_id) return null
    const prev = s.transcript?.messages.atSeq(message.seq - 1)
    return prev &&
      prev.seq === message.seq - 1 &&
      prev.role === 'user' &&
      prev.kind === 'text' &&
      prev.turn_id === message.turn_id
      ? prev.seq
      : null
  })
  const versionSeq = message.role === 'user' && message.kind === 'text' ? message.seq : promptSeq
  const canRegenerate =
    message.role === 'assistant' && message.kind === 'text' && message.turn_id !== undefined
  // The text is joined when it is copied, not at every render (a streaming reply renders each frame).
  const hasText = message.parts.some((p) => p.type === 'text' && p.text !== '')
  return (
    <div className="msg-toolbar">
      {versionSeq !== null && <VersionSwitch seq={versionSeq} />}
      <div className="msg-actions" role="group" aria-label={`Actions for message ${message.seq}`}>
        {canRegenerate && (
          <button
            type="button"
            className="msg-action-btn"
            title="A new reply to the same prompt, as a new version (a fork); this one stays"
            onClick={() => void regenerate(message.message_id)}
          >
            <RegenerateIcon /> Regenerate
          </button>
        )}
        {onEdit && (
          <button
            type="button"
            className="msg-action-btn"
            onClick={onEdit}
            title="Edit and resend (as a fork)"
          >
            <EditIcon /> Edit
          </button>
        )}
        <button
          type="button"
          className="msg-action-btn"
          // One title whatever the session's state: a title that changed with it re-rendered every
          // visible message's toolbar as each turn started and ended.
          title="A new session with the history up to this message (a turn still running is left out)"
          onClick={() => void fork({ message_id: message.message_id })}
        >
          <BranchIcon /> Fork from here
        </button>
        {hasText && (
          <button
            type="button"
            className="msg-action-btn"
            aria-label="Copy message"
            title="Copy the text"
            onClick={() =>
              void copyText(textOf(message)).then((ok) => ok && notify('Copied to the clipboard.'))
            }
          >
            <CopyIcon />
          </button>
        )}
      </div>
    </div>
  )
}

/** The user's message, with edit-and-resend: the edit goes to a fork made just before it. */
export function UserMessage({ message }: { message: SessionMessage }) {
  const { editAndResend } = useActions()
  const [editing, setEditing] = useState(false)
  const [draft, setDraft] = useState('')
  const ref = useRef<HTMLTextAreaElement>(null)
  const text = textOf(message)
  const files = useMemo(() => attachmentsOf(message.parts), [message.parts])

  useEffect(() => {
    if (editing) ref.current?.focus()
  }, [editing])

  const submit = () => {
    if (!draft.trim()) return
    setEditing(false)
    void editAndResend(message.message_id, draft)
  }
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      submit()
    } else if (e.key === 'Escape') {
      e.stopPropagation()
      setEditing(false)
    }
  }

  if (editing) {
    return (
      <div className="msg-wrap wrap-user">
        <form
          className="edit-form"
          aria-label="Edit message"
          onSubmit={(e) => {
            e.preventDefault()
            submit()
          }}
        >
          <textarea
            ref={ref}
            className="input edit-input"
            dir="auto"
            aria-label="Edited message"
            value={draft}
            rows={Math.min(10, Math.max(2, draft.split('\n').length))}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={onKeyDown}
          />
          <div className="edit-actions">
            <span className="edit-hint">
              Sends as a new version (a fork); this one stays, ‹ › switches between them.
            </span>
            <button type="button" className="btn btn-small" onClick={() => setEditing(false)}>
              Cancel
            </button>
            <button type="submit" className="btn btn-small btn-primary" disabled={!draft.trim()}>
              Send
            </button>
          </div>
        </form>
      </div>
    )
  }

  return (
    <div className="msg-wrap wrap-user">
      <article
        className="msg msg-user"
        aria-label="You"
        data-role={message.role}
        data-kind={message.kind}
        data-status={message.status}
        data-message-id={message.message_id}
      >
        <div className="bubble">
          <p className="user-text" dir="auto">
            {text}
          </p>
        </div>
        <AttachmentChips files={files} />
      </article>
      <MessageActions
        message={message}
        onEdit={() => {
          setDraft(text)
          setEditing(true)
        }}
      />
    </div>
  )
}
