import { useState } from 'react'
import { errorText, useArbor } from '../state/client'
import { useActions, useApp } from '../state/hooks'
import { FolderField } from './FolderField'

/**
 * Settings → General → the folder new chats work in: one the user chose (checked by main), or
 * none, and then each chat gets a folder of its own in the data folder. Chats already made keep
 * theirs; each can change it from its header.
 */
export function WorkspaceSettings() {
  const arbor = useArbor()
  const { loadSettings } = useActions()
  const current = useApp((s) => s.settings?.default_workspace)
  const dataDir = useApp((s) => s.app?.data_dir)
  const [note, setNote] = useState<string | null>(null)
  const save = async (default_workspace: string | null) => {
    try {
      await arbor.call('settings.set', { default_workspace })
      await loadSettings()
      setNote(
        default_workspace
          ? `New chats work in ${default_workspace}.`
          : 'Each new chat gets a folder of its own.',
      )
    } catch (err) {
      setNote(errorText(err))
    }
  }
  return (
    <section className="field workspace-settings" aria-label="Workspace">
      <FolderField
        key={current ?? ''}
        label="Default folder for new chats"
        initial={current ?? ''}
        submitLabel="Save"
        dialogTitle="Default folder for new chats"
        onChosen={(path) => save(path)}
      />
      <span className="field-help" aria-live="polite">
        {note ??
          (current
            ? `New chats work in this folder. Each chat can change its own from its header.`
            : `None: each new chat gets a folder of its own in ${dataDir ?? 'the data folder'}/workspaces.`)}
      </span>
      {current && (
        <div>
          <button type="button" className="btn btn-small" onClick={() => void save(null)}>
            Use a folder per chat instead
          </button>
        </div>
      )}
    </section>
  )
}
