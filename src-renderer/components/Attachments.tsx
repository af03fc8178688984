import { useState } from 'react'
import type { Attachment } from '../../src-shared/types'
import { sizeLabel } from '../lib/attachments'
import { FileIcon } from './Icons'
import { Modal } from './Modal'

/**
 * Files on a prompt, as chips: an image's thumbnail or a text file's name and length. In the
 * composer each has a remove button; on a sent message a chip opens the file to read.
 */
export function AttachmentChips({
  files,
  onRemove,
}: {
  files: readonly Attachment[]
  onRemove?: (i: number) => void
}) {
  const [open, setOpen] = useState<Attachment | null>(null)
  if (files.length === 0) return null
  return (
    <>
      <ul className="attachments" aria-label="Attached files">
        {files.map((f, i) => {
          const lines = f.text?.split('\n').length
          const detail =
            lines !== undefined
              ? `${lines} ${lines === 1 ? 'line' : 'lines'} · ${sizeLabel(f.size)}`
              : sizeLabel(f.size)
          return (
            <li key={`${f.name}:${i}`} className="attachment">
              <button
                type="button"
                className="attachment-open"
                title={`Open ${f.name}`}
                onClick={() => setOpen(f)}
              >
                {f.data !== undefined ? (
                  <img className="attachment-thumb" src={`data:${f.mime_type};base64,${f.data}`} alt="" />
                ) : (
                  <FileIcon />
                )}
                <span className="attachment-name">{f.name}</span>{' '}
                <span className="attachment-detail">{detail}</span>
              </button>
              {onRemove && (
                <button
                  type="button"
                  className="icon-btn attachment-remove"
                  aria-label={`Remove ${f.name}`}
                  onClick={() => onRemove(i)}
                >
                  ×
                </button>
              )}
            </li>
          )
        })}
      </ul>
      {open && (
        <Modal title={open.name} onClose={() => setOpen(null)} className="modal-wide">
          {open.data !== undefined ? (
            <img
              className="attachment-full"
              src={`data:${open.mime_type};base64,${open.data}`}
              alt={open.name}
            />
          ) : (
            <pre className="attachment-text" dir="auto">
              {open.text}
            </pre>
          )}
        </Modal>
      )}
    </>
  )
}
