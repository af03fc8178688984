import { useState } from 'react'
import { isOwnFolder, shortPath } from '../lib/paths'
import { useApp } from '../state/hooks'
import { FolderDialog } from './FolderDialog'
import { FolderIcon } from './Icons'

/**
 * The chat's folder in its header: short (~/projects/site), whole on hover; click to change it.
 * A folder Arbor made for the chat is only its icon: its path (…/ses_01j9…) says nothing, and
 * the header's title needs the room.
 */
export function ChatFolder({ path, disabled }: { path: string; disabled?: boolean }) {
  const home = useApp((s) => s.app?.home_dir)
  const [open, setOpen] = useState(false)
  const own = isOwnFolder(path)
  return (
    <>
      <button
        type="button"
        className={own ? 'btn btn-small chat-folder chat-folder-own' : 'btn btn-small chat-folder'}
        title={
          own
            ? `This chat’s own folder, made by Arbor: ${path} — choose a folder of yours`
            : `${path} — change this chat’s folder`
        }
        aria-label={`Chat folder: ${path}. Change…`}
        disabled={disabled}
        onClick={() => setOpen(true)}
      >
        <FolderIcon />
        {!own && <span className="chat-folder-path">{shortPath(path, home, 32)}</span>}
      </button>
      {open && <FolderDialog current={path} onClose={() => setOpen(false)} />}
    </>
  )
}
