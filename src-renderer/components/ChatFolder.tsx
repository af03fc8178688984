import { useState } from 'react'
import { shortPath } from '../lib/paths'
import { useApp } from '../state/hooks'
import { FolderDialog } from './FolderDialog'

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

/** Inline, so it does not depend on an emoji font. */
function FolderIcon() {
  return (
    <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path
        d="M1.8 4.2c0-.7.5-1.2 1.2-1.2h3.3l1.5 1.6H13c.7 0 1.2.5 1.2 1.2v6.4c0 .7-.5 1.2-1.2 1.2H3c-.7 0-1.2-.5-1.2-1.2z"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.4"
        strokeLinejoin="round"
      />
    </svg>
  )
}
