import { useActions } from '../state/hooks'
import { FolderField } from './FolderField'
import { Modal } from './Modal'

/**
 * Changes the folder one chat works in (the header's folder button). Applied through
 * `set({ env: { workspace } })`, queued like every change, which the transcript records as an
 * Action line; the tools of the next step work there.
 */
export function FolderDialog({ current, onClose }: { current: string; onClose: () => void }) {
  const { setWorkspace } = useActions()
  return (
    <Modal
      title="Folder for this chat"
      onClose={onClose}
      className="modal-small"
      footer={
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
      }
    >
      <p className="field-help folder-intro">
        The assistant’s tools read and write files only inside this folder. Other chats keep theirs.
      </p>
      <FolderField
        label="Folder"
        initial={current}
        submitLabel="Use this folder"
        dialogTitle="Folder for this chat"
        autoFocus
        onChosen={async (path) => {
          if (path !== current) await setWorkspace(path)
          onClose()
        }}
      />
    </Modal>
  )
}
