import { useEffect, useRef, useState } from 'react'
import type { ModelOption, SecurityMode } from '../../src-shared/types'
import { SECURITY_LABELS, useActions, useApp } from '../state/hooks'
import { ChatFolder } from './ChatFolder'
import { BranchIcon } from './Icons'
import { InstructionsDialog } from './Instructions'
import { McpChatDialog } from './McpChat'
import { Confirm } from './Modal'
import { StateBadge } from './StateBadge'
import { ContextLine, ContextMeter } from './Usage'
import { FolderDialog } from './FolderDialog'
import { shortPath } from '../lib/paths'
import { useFold } from '../lib/use-fold'

const MODES = Object.keys(SECURITY_LABELS) as SecurityMode[]
const NO_MODELS: ModelOption[] = []

type Pending = 'clear' | 'mcp' | 'instructions' | 'folder' | null

/**
 * The open session: its title (rename in place), fork lineage, model and approval mode (both
 * changed through `set()`, which records an Action line), the History panel and more actions.
 */
export function ChatHeader() {
  const info = useApp((s) => s.transcript?.info ?? null)
  const hasSession = useApp((s) => s.transcript !== null)
  const models = useApp((s) => s.app?.models ?? NO_MODELS)
  const panel = useApp((s) => s.panel)
  const parentTitle = useApp((s) => {
    const id = s.transcript?.info?.parent?.parent_session_id
    return id ? (s.sessions.find((x) => x.session_id === id)?.title ?? null) : null
  })
  const actions = useActions()
  const home = useApp((s) => s.app?.home_dir)
  const [renaming, setRenaming] = useState(false)
  const [title, setTitle] = useState('')
  // Open for one chat: navigating elsewhere closes it.
  const [menuFor, setMenuFor] = useState<string | null>(null)
  const menu = info !== null && info !== undefined && menuFor === info.session_id
  const setMenu = (open: boolean | ((m: boolean) => boolean)) =>
    setMenuFor((current) => {
      const now = info?.session_id ?? null
      const next = typeof open === 'function' ? open(current !== null && current === now) : open
      return next ? now : null
    })
  const menuButton = useRef<HTMLButtonElement>(null)
  const [confirm, setConfirm] = useState<Pending>(null)
  const menuRef = useRef<HTMLDivElement>(null)
  const headerRef = useRef<HTMLElement>(null)
  // A narrow header folds its controls into ⋯: first the context figures, then History, then
  // the approval mode, then the folder (the model stays, with the title).
  const fold = useFold(
    headerRef,
    4,
    info
      ? [
          info.session_id,
          info.title,
          info.state,
          info.archived,
          info.parent?.fork_seq,
          info.env.workspace,
          info.env.instructions ? 1 : 0,
          info.model,
          panel,
        ].join('|')
      : '',
  )

  useEffect(() => {
    if (!menu) return
    const close = (e: MouseEvent) => {
      if (!menuRef.current?.contains(e.target as Node)) setMenuFor(null)
    }
    document.addEventListener('mousedown', close)
    return () => document.removeEventListener('mousedown', close)
  }, [menu])

  if (!hasSession || !info) {
    return (
      <header className="chat-header">
        <div className="chat-heading">
          <SidebarToggle />
          <h1 className="chat-title">New conversation</h1>
        </div>
      </header>
    )
  }

  const id = info.session_id
  const busy = info.state === 'running' || info.state === 'waiting'
  const modelKnown = models.some((m) => m.id === info.model)
  const startRename = () => {
    setTitle(info.title)
    setRenaming(true)
    setMenu(false)
  }
  const item = (label: string, run: () => void, opts: { danger?: boolean; disabled?: boolean } = {}) => (
    <button
      type="button"
      role="menuitem"
      className={`menu-item${opts.danger ? ' danger' : ''}`}
      disabled={opts.disabled}
      onClick={() => {
        setMenu(false)
        run()
      }}
    >
      {label}
    </button>
  )

  return (
    <header className={`chat-header${fold ? ` folded-${fold}` : ''}`} ref={headerRef}>
      <div
        className={
          info.state !== 'idle' || info.archived || info.env.instructions
            ? 'chat-heading with-badge'
            : 'chat-heading'
        }
      >
        <SidebarToggle />
        {renaming ? (
          <form
            className="rename-form"
            onSubmit={(e) => {
              e.preventDefault()
              setRenaming(false)
              if (title.trim() && title.trim() !== info.title) void actions.rename(id, title)
            }}
          >
            <input
              className="input rename-input"
              aria-label="Chat title"
              value={title}
              maxLength={200}
              autoFocus
              onChange={(e) => setTitle(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Escape') {
                  e.stopPropagation()
                  setRenaming(false)
                }
              }}
              onBlur={() => setRenaming(false)}
            />
          </form>
        ) : (
          <h1 className="chat-title" title="Double-click to rename" onDoubleClick={startRename}>
            {info.title || 'New chat'}
          </h1>
        )}
        <StateBadge state={info.state} />
        {info.archived && <span className="badge">Archived</span>}
        {info.env.instructions && (
          <button
            type="button"
            className="badge badge-button"
            title={info.env.instructions}
            onClick={() => setConfirm('instructions')}
          >
            Instructions
          </button>
        )}
        {info.parent && (
          <button
            type="button"
            className="lineage-link"
            title="Open the session this one was forked from"
            onClick={() => void actions.openSession(info.parent!.parent_session_id)}
          >
            <BranchIcon />
            <span className="lineage-text">
              forked from {parentTitle ? `“${parentTitle}”` : 'a session'} at message {info.parent.fork_seq}
            </span>
          </button>
        )}
      </div>
      <div className="chat-meta">
        {fold < 4 && info.env.workspace && (
          <ChatFolder path={info.env.workspace} session_id={info.session_id} disabled={info.archived} />
        )}
        {fold < 1 && <ContextMeter model={info.model} />}
        <label className="meta-item">
          <span className="meta-label">Model</span>
          <select
            aria-label="Model"
            className="select model-select"
            value={info.model}
            onChange={(e) => void actions.setModel(e.target.value)}
          >
            {!modelKnown && <option value={info.model}>{info.model} (unavailable)</option>}
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.label}
              </option>
            ))}
          </select>
        </label>
        {fold < 3 && (
          <label className="meta-item">
            <span className="meta-label">Approvals</span>
            <select
              aria-label="Approval mode"
              className="select"
              value={info.security}
              onChange={(e) => void actions.setSecurity(e.target.value as SecurityMode)}
            >
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {SECURITY_LABELS[m]}
                </option>
              ))}
            </select>
          </label>
        )}
        {fold < 2 && (
          <button
            type="button"
            className={`btn btn-small${panel === 'history' ? ' active' : ''}`}
            aria-pressed={panel === 'history'}
            onClick={() => actions.setPanel(panel === 'history' ? null : 'history')}
          >
            History
          </button>
        )}
        <div className="menu-wrap" ref={menuRef}>
          <button
            ref={menuButton}
            type="button"
            className="icon-btn"
            aria-label="More actions"
            aria-haspopup="menu"
            aria-expanded={menu}
            onClick={() => setMenu((m) => !m)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowDown' && !menu) {
                e.preventDefault()
                setMenu(true)
              }
            }}
          >
            ⋯
          </button>
          {menu && (
            <div
              className="menu"
              role="menu"
              aria-label="Session actions"
              ref={(el) => {
                // Opened: the first item has the focus (the WAI-ARIA menu button pattern).
                if (el && !el.contains(document.activeElement))
                  el.querySelector<HTMLElement>('[role^="menuitem"]:not(:disabled)')?.focus()
              }}
              onKeyDown={(e) => {
                const items = [
                  ...e.currentTarget.querySelectorAll<HTMLElement>('[role^="menuitem"]:not(:disabled)'),
                ]
                const at = items.indexOf(document.activeElement as HTMLElement)
                const move = (i: number) => {
                  e.preventDefault()
                  items[(i + items.length) % items.length]?.focus()
                }
                if (e.key === 'ArrowDown') move(at + 1)
                else if (e.key === 'ArrowUp') move(at - 1)
                else if (e.key === 'Home') move(0)
                else if (e.key === 'End') move(items.length - 1)
                else if (e.key === 'Escape') {
                  e.preventDefault()
                  e.stopPropagation()
                  setMenuFor(null)
                  menuButton.current?.focus()
                } else if (e.key === 'Tab') setMenuFor(null)
              }}
            >
              {item('Rename', startRename)}
              {item('Fork this chat', () => void actions.fork({}))}
              {item('Instructions…', () => setConfirm('instructions'), { disabled: info.archived })}
              {item('MCP servers…', () => setConfirm('mcp'), { disabled: info.archived })}
              {item('Clear messages…', () => setConfirm('clear'), { disabled: busy || info.archived })}
              {info.archived
                ? item('Unarchive', () => void actions.archive(id, false))
                : item('Archive', () => void actions.archive(id, true), { disabled: busy })}
              {item('Export as Markdown', () => void actions.exportChat(id, 'markdown'))}
              {item('Export as JSON', () => void actions.exportChat(id, 'json'))}
              {/* No confirmation: it goes to the Trash, and the toast offers Undo. */}
              {fold >= 1 && <div role="separator" className="menu-separator" />}
              {fold >= 1 && <ContextLine model={info.model} />}
              {fold >= 2 && (
                <>
                  <button
                    type="button"
                    role="menuitemcheckbox"
                    aria-checked={panel === 'history'}
                    className="menu-item"
                    onClick={() => {
                      setMenu(false)
                      actions.setPanel(panel === 'history' ? null : 'history')
                    }}
                  >
                    History
                  </button>
                </>
              )}
              {fold >= 3 && (
                <div role="group" aria-label="Approval mode" className="menu-group">
                  <span className="menu-group-label" aria-hidden="true">
                    Approvals
                  </span>
                  {MODES.map((m) => (
                    <button
                      key={m}
                      type="button"
                      role="menuitemradio"
                      aria-checked={info.security === m}
                      className="menu-item"
                      onClick={() => {
                        setMenu(false)
                        if (m !== info.security) void actions.setSecurity(m)
                      }}
                    >
                      {SECURITY_LABELS[m]}
                    </button>
                  ))}
                </div>
              )}
              {fold >= 4 &&
                info.env.workspace &&
                item(`Folder: ${shortPath(info.env.workspace, home, 28)}…`, () => setConfirm('folder'), {
                  disabled: info.archived,
                })}
              {fold >= 1 && <div role="separator" className="menu-separator" />}
              {item('Remove', () => void actions.removeSession(id), { danger: true })}
            </div>
          )}
        </div>
      </div>
      {confirm === 'folder' && info.env.workspace && (
        <FolderDialog current={info.env.workspace} onClose={() => setConfirm(null)} />
      )}
      {confirm === 'instructions' && (
        <InstructionsDialog current={info.env.instructions ?? ''} onClose={() => setConfirm(null)} />
      )}
      {confirm === 'mcp' && <McpChatDialog plugins={info.plugins} onClose={() => setConfirm(null)} />}
      {confirm === 'clear' && (
        <Confirm
          title="Clear messages?"
          message={`The messages of “${info.title}” are hidden from it and from its model context. Its checkpoints and forks keep them.`}
          confirm="Clear messages"
          danger
          onConfirm={() => void actions.clearMessages(id)}
          onCancel={() => setConfirm(null)}
        />
      )}
    </header>
  )
}

/** Shows or hides the chat list (also Mod+Shift+S); it starts hidden in a narrow window. */
function SidebarToggle() {
  const open = useApp((s) => s.sidebar)
  const { setSidebar } = useActions()
  return (
    <button
      type="button"
      className="icon-btn sidebar-toggle"
      aria-label={open ? 'Hide the chat list' : 'Show the chat list'}
      aria-pressed={open}
      title={open ? 'Hide the chat list' : 'Show the chat list'}
      onClick={() => setSidebar(!open)}
    >
      ☰
    </button>
  )
}
