import { useState } from 'react'
import { shortPath } from '../lib/paths'
import { useApp } from '../state/hooks'
import { FolderDialog } from './FolderDialog'
import { FolderIcon } from './Icons'

/** The chat's folder in its header: short (~/projects/site), whole on hover; click to change it. */
export function ChatFolder({ path, disabled }: { path: string; disabled?: boolean }) {
  const home = useApp((s) => s.app?.home_dir)
  const [open, setOpen] = useState(false)
  return (
    <>
      <button
        type="button"
        className="btn btn-small chat-folder"
        title={`${path} — change this chat’s folder`}
        aria-label={`Chat folder: ${path}. Change…`}
        disabled={disabled}
        onClick={() => setOpen(true)}
      >
        <FolderIcon />
        <span className="chat-folder-path">{shortPath(path, home, 32)}</span>
      </button>
      {open && <FolderDialog current={path} onClose={() => setOpen(false)} />}
    </>
  )
}
