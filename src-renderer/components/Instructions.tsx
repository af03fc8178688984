import { useState } from 'react'
import { useActions } from '../state/hooks'
import { Modal } from './Modal'

const MAX = 20_000

/**
 * The chat's own instructions (⋯ → Instructions…): a system prompt of its own, given to the
 * model before anything else in every request of this chat. Saved through `set({ env })`, so it
 * is queued like any change, recorded as an Action line, and inherited by forks.
 */
export function InstructionsDialog({ current, onClose }: { current: string; onClose: () => void }) {
  const { setInstructions } = useActions()
  const [text, setText] = useState(current)
  const changed = text.trim() !== current.trim()
  const save = () => {
    void setInstructions(text.trim())
    onClose()
  }
  return (
    <Modal
      title="Instructions for this chat"
      onClose={onClose}
      footer={
        <>
          {current && (
            <button
              type="button"
              className="btn btn-ghost"
              onClick={() => {
                void setInstructions('')
                onClose()
              }}
            >
              Remove instructions
            </button>
          )}
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="btn btn-primary" disabled={!changed} onClick={save}>
            Save
          </button>
        </>
      }
    >
      <p className="confirm-message">
        The model reads these before anything else, in every reply of this chat (and of chats forked from it).
        For example: “Answer in French” or “You are reviewing a Rust codebase; be terse.”
      </p>
      <textarea
        className="input instructions-input"
        aria-label="Instructions"
        value={text}
        maxLength={MAX}
        rows={10}
        autoFocus
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.metaKey || e.ctrlKey) && changed) {
            e.preventDefault()
            save()
          }
        }}
      />
      <p className="instructions-count">
        {text.length.toLocaleString()} / {MAX.toLocaleString()} characters · Ctrl/⌘+Enter saves
      </p>
    </Modal>
  )
}
