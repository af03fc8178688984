import { useState } from 'react'
import { madeFolder, shortPath } from '../lib/paths'
import { useApp } from '../state/hooks'
import { FolderDialog } from './FolderDialog'
import { FolderIcon } from './Icons'

const OTHER = 'Parent chat’s folder'

/**
 * The chat's folder in its header: short (~/projects/site), whole on hover; click to change it.
 * A folder Arbor made for the chat is only its icon: its path (…/ses_01j9…) says nothing, and
 * the header's title needs the room. One it made for another chat (a fork works in its parent's)
 * says so: the fork's tools change that chat's files.
 */
export function ChatFolder({
  path,
  session_id,
  disabled,
}: {
  path: string
  session_id: string
  disabled?: boolean
}) {
  const home = useApp((s) => s.app?.home_dir)
  const [open, setOpen] = useState(false)
  const made = madeFolder(path, session_id)
  const title =
    made === 'own'
      ? `This chat’s own folder, made by Arbor: ${path} — choose a folder of yours`
      : made === 'other'
        ? `The folder of the chat this one was forked from, made by Arbor: ${path} — change this chat’s folder`
        : `${path} — change this chat’s folder`
  return (
    <>
      <button
        type="button"
        className={made === 'own' ? 'btn btn-small chat-folder chat-folder-own' : 'btn btn-small chat-folder'}
        title={title}
        // The visible words are part of the name (a speech user says what they see).
        aria-label={
          made === 'other' ? `Chat folder: ${OTHER} (${path}). Change…` : `Chat folder: ${path}. Change…`
        }
        disabled={disabled}
        onClick={() => setOpen(true)}
      >
        <FolderIcon />
        {made !== 'own' && (
          <span className="chat-folder-path">{made === 'other' ? OTHER : shortPath(path, home, 32)}</span>
        )}
      </button>
      {open && <FolderDialog current={path} onClose={() => setOpen(false)} />}
    </>
  )
}
