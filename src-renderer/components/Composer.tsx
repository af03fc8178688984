import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react'
import { useActions, useApp, useAppStore } from '../state/hooks'
import { pendingInteractions } from '../state/transcript'
import { MAX_ATTACHMENT_TEXT_CHARS, MAX_TEXT_CHARS } from '../../src-shared/limits'
import type { Attachment } from '../../src-shared/types'
import { readFiles, textAsFile } from '../lib/attachments'
import { textDirection } from '../lib/direction'
import { typing } from '../lib/shortcuts'
import { AttachmentChips } from './Attachments'
import { PromptMenu, ResourcePicker, usePromptMenu } from './McpComposer'

const NO_PLUGINS: string[] = []

export const COMPOSER_ID = 'composer-input'

/**
 * Unsent text, per chat: kept in this window's localStorage (so it survives a reload) and in
 * memory when storage is unavailable. The chat's id is the key; a chat not created yet is "new".
 */
const drafts = new Map<string, string>()
/** The draft of the chat New chat is creating. */
const PENDING = '(pending)'
const draftKey = (id: string | null) => `arbor.draft.${id ?? 'new'}`

function draftOf(id: string | null): string {
  try {
    // Memory first: a long draft reaches localStorage a moment after its last change.
    return drafts.get(draftKey(id)) ?? localStorage.getItem(draftKey(id)) ?? ''
  } catch {
    return drafts.get(draftKey(id)) ?? ''
  }
}

/**
 * A long draft reaches localStorage this long after its last change (setItem copies the whole
 * text: 1 MB on every key held each key press ~100 ms), and at once when the window goes.
 */
const LONG_DRAFT_CHARS = 10_000
const LONG_DRAFT_MS = 500
const unsaved = new Map<string, ReturnType<typeof setTimeout>>()

function store(key: string, text: string): void {
  try {
    if (text) localStorage.setItem(key, text)
    else localStorage.removeItem(key)
  } catch {
    // Storage full or disabled: the in-memory copy still follows the chat.
  }
}

function saveDraft(id: string | null, text: string): void {
  const key = draftKey(id)
  if (text) drafts.set(key, text)
  else drafts.delete(key)
  clearTimeout(unsaved.get(key))
  unsaved.delete(key)
  if (text.length <= LONG_DRAFT_CHARS) return store(key, text)
  unsaved.set(
    key,
    setTimeout(() => {
      unsaved.delete(key)
      store(key, drafts.get(key) ?? '')
    }, LONG_DRAFT_MS),
  )
}

if (typeof window !== 'undefined')
  window.addEventListener('pagehide', () => {
    for (const [key, timer] of unsaved) {
      clearTimeout(timer)
      store(key, drafts.get(key) ?? '')
    }
    unsaved.clear()
  })

/** What a message with files and no text says (a prompt always has text). */
const FILES_ONLY = 'See the attached files.'
/** What a message says when its over-long text went as a file. */
const LONG_TEXT_NOTE = 'The text is in the attached file.'

/**
 * Enter sends, Shift+Enter adds a line. While a turn runs, new prompts queue behind it, Steer
 * sends the text as a steering note to the running turn instead, and Stop (or Esc) interrupts
 * the turn (its partial output stays).
 */
export function Composer() {
  const sessionId = useApp((s) => s.transcript?.session_id ?? null)
  const state = useApp((s) => s.transcript?.info?.state ?? 'idle')
  const connected = useApp((s) => s.connected)
  const store = useAppStore()
  const { send, stop, steer } = useActions()
  const creating = useApp((s) => s.creating)
  const [text, setTextState] = useState(() => draftOf(sessionId))
  // Text typed while New chat is on its way belongs to the new chat (kept as "pending" until
  // it opens); otherwise to the chat shown.
  const setText = (next: string | ((t: string) => string)) =>
    setTextState((t) => {
      const value = typeof next === 'function' ? next(t) : next
      saveDraft(store.getState().creating ? PENDING : sessionId, value)
      return value
    })
  // Another chat opened: its own draft comes back, or what was typed for it while it was made.
  const [draftFor, setDraftFor] = useState(sessionId)
  if (draftFor !== sessionId) {
    setDraftFor(sessionId)
    // Typed before any chat was shown (the app still opening one): it belongs to that chat too.
    const pending = draftOf(PENDING) || (draftFor === null ? text : '')
    if (pending) {
      saveDraft(PENDING, '')
      saveDraft(null, '')
      saveDraft(sessionId, pending)
      setTextState(pending)
    } else setTextState(draftOf(sessionId))
  } else if (!creating && draftOf(PENDING)) {
    // New chat reused the chat already open: what was typed meanwhile is simply its draft.
    saveDraft(sessionId, draftOf(PENDING))
    saveDraft(PENDING, '')
  }
  const ref = useRef<HTMLTextAreaElement>(null)
  const running = state === 'running' || state === 'waiting'
  // Files for the next message (dropped, pasted or picked), and why others were refused.
  const [files, setFiles] = useState<Attachment[]>([])
  const [refused, setRefused] = useState<string[]>([])
  const [dropping, setDropping] = useState(false)
  const picker = useRef<HTMLInputElement>(null)
  const addFiles = async (list: readonly File[]) => {
    if (list.length === 0) return
    const read = await readFiles(list, files.length)
    setFiles((f) => [...f, ...read.files])
    setRefused(read.refused)
    ref.current?.focus()
  }
  // Counted once a render: a pasted draft may be a megabyte.
  const chars = text.trim().length
  const tooLong = chars > MAX_TEXT_CHARS
  // Too long for a file as well: said where it stays, not by a refusal after sending (a toast
  // that goes, and the file back in the composer without a word).
  const tooLongForAFile = chars > MAX_ATTACHMENT_TEXT_CHARS
  const plugins = useApp((s) => s.transcript?.info?.plugins ?? NO_PLUGINS)
  const menu = usePromptMenu(text, plugins, (t) => {
    setText(t)
    ref.current?.focus()
  })
  const menuId = useId()

  // A newly opened conversation is ready to type into, unless an approval holds the focus or
  // the reader is typing somewhere else (the search box, while the app opens its last chat):
  // their next keys must not land in the message.
  useEffect(() => {
    const active = document.activeElement
    const elsewhere = active !== ref.current && typing(active)
    if (!elsewhere && pendingInteractions(store.getState().transcript).length === 0) ref.current?.focus()
  }, [sessionId, store])

  const submit = () => {
    const query = text.trim()
    if (!query && files.length === 0) return
    // Too long for a message: the composer offers to send it as a file instead (see below).
    if (query.length > MAX_TEXT_CHARS) return
    const attached = files
    setText('')
    setFiles([])
    setRefused([])
    void send(query || FILES_ONLY, attached).then((ok) => {
      // Give the text and files back if they could not be sent (and nothing new was typed meanwhile).
      if (!ok) {
        setText((current) => current || query)
        setFiles((current) => (current.length ? current : attached))
      }
    })
  }

  /** The text over the limit becomes a file on the message; what the user sends is a short note. */
  const sendAsFile = () => {
    const attached = [...files, textAsFile(text.trim())]
    setText('')
    setFiles([])
    setRefused([])
    void send(LONG_TEXT_NOTE, attached).then((ok) => {
      if (!ok) setFiles(attached)
    })
  }

  const submitSteer = () => {
    const note = text.trim()
    if (!note) return
    setText('')
    void steer(note).then((ok) => {
      if (!ok) setText((current) => current || note)
    })
  }

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (menu.onKey(e)) return
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      submit()
    } else if (e.key === 'Escape' && state === 'running') {
      e.preventDefault()
      void stop()
    }
  }

  return (
    <form
      className={`composer${dropping ? ' dropping' : ''}${files.length > 0 || refused.length > 0 || tooLong ? ' has-top' : ''}`}
      aria-label="Compose a message"
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes('Files')) return
        e.preventDefault()
        setDropping(true)
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDropping(false)
      }}
      onDrop={(e) => {
        if (e.dataTransfer.files.length === 0) return
        e.preventDefault()
        setDropping(false)
        void addFiles([...e.dataTransfer.files])
      }}
    >
      <PromptMenu menu={menu} listId={menuId} />
      {(files.length > 0 || refused.length > 0 || tooLong) && (
        <div className="composer-top">
          <AttachmentChips files={files} onRemove={(i) => setFiles((f) => f.filter((_, j) => j !== i))} />
          {refused.length > 0 && (
            <p className="composer-refused" role="alert">
              {refused.join(' ')}
            </p>
          )}
          {tooLong && (
            <div className="composer-notice" role="status">
              {tooLongForAFile ? (
                <span>
                  This is {chars.toLocaleString()} characters: more than a message (
                  {MAX_TEXT_CHARS.toLocaleString()}) or an attached file (
                  {MAX_ATTACHMENT_TEXT_CHARS.toLocaleString()}) holds. Shorten it, or split it into parts.
                </span>
              ) : (
                <>
                  <span>
                    This is {chars.toLocaleString()} characters: a message holds at most{' '}
                    {MAX_TEXT_CHARS.toLocaleString()}. Send it as an attached file instead?
                  </span>
                  <button
                    type="button"
                    className="btn btn-small btn-primary"
                    onClick={sendAsFile}
                    disabled={!connected}
                  >
                    Send as a file
                  </button>
                </>
              )}
            </div>
          )}
        </div>
      )}
      <textarea
        ref={ref}
        id={COMPOSER_ID}
        className={text.length > LONG_DRAFT_CHARS ? 'composer-input composer-input-long' : 'composer-input'}
        dir={textDirection(text)}
        aria-label="Message"
        {...(menu.open
          ? {
              'aria-autocomplete': 'list' as const,
              'aria-controls': menuId,
              'aria-activedescendant': `${menuId}-${menu.active}`,
            }
          : {})}
        placeholder={running ? 'Queue a follow-up…' : 'Message Arbor…'}
        rows={1}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        onPaste={(e) => {
          // Pasted files (a screenshot, files copied in a file manager) are attached; text pastes as text.
          const pasted = [...e.clipboardData.files]
          if (pasted.length === 0) {
            // A long text: the fixed height before the browser puts it in, not after (laid out
            // sized to its content first, a pasted 1 MB took 1.1 s more).
            if (text.length + e.clipboardData.getData('text/plain').length > LONG_DRAFT_CHARS)
              e.currentTarget.classList.add('composer-input-long')
            return
          }
          e.preventDefault()
          void addFiles(pasted)
        }}
      />
      <div className="composer-actions">
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          aria-label="Files to attach"
          onChange={(e) => {
            void addFiles([...(e.target.files ?? [])])
            e.target.value = ''
          }}
        />
        <button
          type="button"
          className="btn"
          title="Attach text files or images (or drop them here)"
          onClick={() => picker.current?.click()}
        >
          Add files
        </button>
        <ResourcePicker
          plugins={plugins}
          onAttach={(block) => {
            setText((t) => (t.trim() ? `${t.replace(/\s+$/, '')}\n\n${block}\n` : `${block}\n\n`))
            ref.current?.focus()
          }}
        />
        {running && (
          <button
            type="button"
            className="btn"
            disabled={chars === 0 || !connected}
            title="Send the text as a steering note: the running turn sees it at its next step"
            onClick={submitSteer}
          >
            Steer
          </button>
        )}
        {running && (
          <button
            type="button"
            className="btn btn-stop"
            aria-label="Stop"
            title="Stop the turn (Esc)"
            onClick={() => void stop()}
          >
            <span className="stop-square" aria-hidden="true" />
            Stop
          </button>
        )}
        <button
          type="submit"
          className="btn btn-primary"
          disabled={(chars === 0 && files.length === 0) || tooLong || !connected}
        >
          {running ? 'Queue' : 'Send'}
        </button>
      </div>
      <div className="composer-hint" aria-hidden="true">
        {state === 'running'
          ? 'Enter queues · Steer guides the running turn · Esc stops'
          : state === 'waiting'
            ? 'The turn waits for your answer above · Enter queues a follow-up'
            : 'Enter to send · Shift+Enter for a new line'}
      </div>
    </form>
  )
}
