import { useState } from 'react'
import type { Attachment } from '../../src-shared/types'
import { sizeLabel } from '../lib/attachments'
import { FileIcon } from './Icons'
import { LinePieces, linePieces } from './LinePieces'
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
          const lines = f.text === undefined ? undefined : lineCount(f.text)
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
              <LinePieces pieces={linePieces(open.text ?? '', 110)} />
            </pre>
          )}
        </Modal>
      )}
    </>
  )
}

/**
 * `text.split('\n').length`, without making the lines (a text file may be a megabyte, and the
 * chips draw with each key typed).
 */
function lineCount(text: string): number {
  let lines = 1
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lines++
  return lines
}
