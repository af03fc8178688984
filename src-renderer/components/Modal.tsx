import { useEffect, useId, useRef, type ReactNode } from 'react'
import { createPortal } from 'react-dom'

export interface ModalProps {
  title: string
  onClose: () => void
  children: ReactNode
  /** 'alertdialog' for confirmations. */
  role?: 'dialog' | 'alertdialog'
  className?: string
  footer?: ReactNode
}

const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select, textarea, [tabindex="0"]'

/**
 * A modal over the window: Esc or the backdrop closes it, Tab stays inside, and focus returns
 * to where it was when it closes.
 */
export function Modal({ title, onClose, children, role = 'dialog', className, footer }: ModalProps) {
  const titleId = useId()
  const ref = useRef<HTMLDivElement>(null)
  const close = useRef(onClose)
  useEffect(() => {
    close.current = onClose
  }, [onClose])

  // The window behind is inert while a modal is open (no focus, no clicks, hidden from screen
  // readers); the modal itself lives outside it, in document.body.
  useEffect(() => {
    const root = document.getElementById('root')
    if (!root) return
    open += 1
    root.inert = true
    return () => {
      open -= 1
      if (open === 0) root.inert = false
    }
  }, [])

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null
    const el = ref.current
    const first =
      el?.querySelector<HTMLElement>('[data-autofocus]') ?? el?.querySelector<HTMLElement>(FOCUSABLE)
    first?.focus()
    return () => before?.focus?.()
  }, [])

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation()
      close.current()
      return
    }
    if (e.key !== 'Tab' || !ref.current) return
    const items = [...ref.current.querySelectorAll<HTMLElement>(FOCUSABLE)]
    if (items.length === 0) return
    const first = items[0]
    const last = items[items.length - 1]
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault()
      last.focus()
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault()
      first.focus()
    }
  }

  const modal = (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={ref}
        className={`modal${className ? ` ${className}` : ''}`}
        role={role}
        aria-modal="true"
        aria-labelledby={titleId}
        onKeyDown={onKeyDown}
      >
        <header className="modal-head">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="icon-btn" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </header>
        <div className="modal-body">{children}</div>
        {footer && <footer className="modal-foot">{footer}</footer>}
      </div>
    </div>
  )
  // Where there is an app root to make inert, the modal goes beside it; elsewhere (tests) in place.
  return document.getElementById('root') ? createPortal(modal, document.body) : modal
}

/** How many modals are open (the root stays inert until the last closes). */
let open = 0

export interface ConfirmProps {
  title: string
  message: ReactNode
  confirm: string
  danger?: boolean
  onConfirm: () => void
  onCancel: () => void
}

/** "Are you sure?" with the safe answer focused. */
export function Confirm({ title, message, confirm, danger, onConfirm, onCancel }: ConfirmProps) {
  return (
    <Modal
      title={title}
      onClose={onCancel}
      role="alertdialog"
      className="modal-small"
      footer={
        <>
          <button type="button" className="btn" data-autofocus onClick={onCancel}>
            Cancel
          </button>
          <button
            type="button"
            className={`btn ${danger ? 'btn-danger-solid' : 'btn-primary'}`}
            onClick={() => {
              onConfirm()
              onCancel()
            }}
          >
            {confirm}
          </button>
        </>
      }
    >
      <p className="confirm-message">{message}</p>
    </Modal>
  )
}
