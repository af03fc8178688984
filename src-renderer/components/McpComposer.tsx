import { useEffect, useId, useRef, useState } from 'react'
import type { McpPromptInfo, McpResourceInfo } from '../../src-shared/contract'
import { errorText, useArbor } from '../state/client'

/** How a resource's text goes into a prompt: named by its uri, fenced so it reads as one block. */
export function resourceBlock(uri: string, text: string): string {
  const fence = text.includes('```') ? '~~~~' : '```'
  return `Resource ${uri}:\n${fence}\n${text}\n${fence}`
}

/**
 * The slash menu of a chat's MCP prompts: typing `/` (and more of a name) at the start of an
 * empty composer lists the prompts of the chat's servers; picking one asks for its arguments,
 * if any, and puts the prompt's text in the composer to edit and send.
 */
export function usePromptMenu(text: string, plugins: string[], setText: (t: string) => void) {
  const arbor = useArbor()
  const [loaded, setLoaded] = useState<{ key: string; prompts: McpPromptInfo[] } | null>(null)
  const [active, setActive] = useState(0)
  const [chosen, setChosen] = useState<McpPromptInfo | null>(null)
  const [error, setError] = useState<string | null>(null)
  const key = plugins.join(',')
  const typing = /^\/[\w:.-]*$/.test(text)

  // Fetched once the user starts a slash command in a chat with servers (again when they change).
  const prompts = loaded?.key === key ? loaded.prompts : null
  useEffect(() => {
    if (!typing || prompts !== null || plugins.length === 0) return
    let live = true
    arbor
      .call('mcp.prompts', { server_ids: plugins })
      .then((p) => live && setLoaded({ key, prompts: p }))
      .catch(() => live && setLoaded({ key, prompts: [] }))
    return () => {
      live = false
    }
  }, [arbor, typing, prompts, plugins, key])

  const query = text.slice(1).toLowerCase()
  const matches =
    typing && prompts
      ? prompts.filter((p) => `${p.server}:${p.name}`.toLowerCase().includes(query) || p.name.includes(query))
      : []

  const fill = async (p: McpPromptInfo, args: Record<string, string> = {}) => {
    setError(null)
    try {
      const { text: filled } = await arbor.call('mcp.get_prompt', {
        server_id: p.server_id,
        name: p.name,
        arguments: args,
      })
      setChosen(null)
      setText(filled)
    } catch (err) {
      setError(errorText(err))
    }
  }
  const pick = (p: McpPromptInfo) => {
    if (p.arguments.length) setChosen(p)
    else void fill(p)
  }

  return {
    open: matches.length > 0 && chosen === null,
    matches,
    active: Math.min(active, Math.max(0, matches.length - 1)),
    chosen,
    error,
    /** Arrow keys move, Enter or Tab picks, Esc closes; returns whether it took the key. */
    onKey(e: { key: string; preventDefault(): void }): boolean {
      if (matches.length === 0 || chosen) return false
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault()
        const n = matches.length
        setActive((i) => (i + (e.key === 'ArrowDown' ? 1 : n - 1)) % n)
        return true
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault()
        pick(matches[Math.min(active, matches.length - 1)]!)
        return true
      }
      if (e.key === 'Escape') {
        e.preventDefault()
        setText('')
        return true
      }
      return false
    },
    pick,
    fill,
    cancel: () => setChosen(null),
  }
}

export function PromptMenu({ menu, listId }: { menu: ReturnType<typeof usePromptMenu>; listId: string }) {
  if (menu.chosen)
    return (
      <PromptArgs
        prompt={menu.chosen}
        onUse={(a) => void menu.fill(menu.chosen!, a)}
        onCancel={menu.cancel}
        error={menu.error}
      />
    )
  if (!menu.open) return menu.error ? <p className="form-error">{menu.error}</p> : null
  return (
    <ul className="slash-menu" id={listId} role="listbox" aria-label="Prompts of this chat's MCP servers">
      {menu.matches.map((p, i) => (
        <li
          key={`${p.server_id}:${p.name}`}
          id={`${listId}-${i}`}
          role="option"
          aria-selected={i === menu.active}
          className={i === menu.active ? 'on' : ''}
          onMouseDown={(e) => {
            e.preventDefault()
            menu.pick(p)
          }}
        >
          <code>
            /{p.server}:{p.name}
          </code>
          {p.description && <span className="slash-desc">{p.description}</span>}
        </li>
      ))}
    </ul>
  )
}

function PromptArgs({
  prompt,
  onUse,
  onCancel,
  error,
}: {
  prompt: McpPromptInfo
  onUse: (args: Record<string, string>) => void
  onCancel: () => void
  error: string | null
}) {
  const [args, setArgs] = useState<Record<string, string>>({})
  const first = useRef<HTMLInputElement>(null)
  useEffect(() => first.current?.focus(), [])
  const missing = prompt.arguments.filter((a) => a.required && !args[a.name]?.trim())
  return (
    <div className="prompt-args" role="group" aria-label={`Arguments of ${prompt.name}`}>
      <strong>
        /{prompt.server}:{prompt.name}
      </strong>
      {prompt.arguments.map((a, i) => (
        <label key={a.name} className="field">
          <span className="field-label">
            {a.name}
            {a.required ? ' *' : ''}
          </span>
          <input
            ref={i === 0 ? first : undefined}
            className="input"
            value={args[a.name] ?? ''}
            placeholder={a.description}
            onChange={(e) => setArgs((x) => ({ ...x, [a.name]: e.target.value }))}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && missing.length === 0) {
                e.preventDefault()
                onUse(args)
              } else if (e.key === 'Escape') onCancel()
            }}
          />
        </label>
      ))}
      {error && <p className="form-error">{error}</p>}
      <div className="form-actions">
        <button type="button" className="btn btn-small" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className="btn btn-small btn-primary"
          disabled={missing.length > 0}
          onClick={() => onUse(args)}
        >
          Use prompt
        </button>
      </div>
    </div>
  )
}

/** Browse the resources of a chat's MCP servers and attach one to the prompt being written. */
export function ResourcePicker({
  plugins,
  onAttach,
}: {
  plugins: string[]
  onAttach: (text: string) => void
}) {
  const arbor = useArbor()
  const [open, setOpen] = useState(false)
  const [list, setList] = useState<McpResourceInfo[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const id = useId()
  useEffect(() => {
    if (!open) return
    let live = true
    Promise.all(plugins.map((server_id) => arbor.call('mcp.resources', { server_id }).catch(() => [])))
      .then((all) => live && setList(all.flat()))
      .catch((err: unknown) => live && setError(errorText(err)))
    return () => {
      live = false
    }
  }, [arbor, open, plugins])
  if (plugins.length === 0) return null
  const attach = async (r: McpResourceInfo) => {
    try {
      const { text } = await arbor.call('mcp.read_resource', { server_id: r.server_id, uri: r.uri })
      onAttach(resourceBlock(r.uri, text))
      setOpen(false)
    } catch (err) {
      setError(errorText(err))
    }
  }
  return (
    <div className="menu-wrap">
      <button
        type="button"
        className="btn"
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-controls={id}
        title="Attach a resource from this chat's MCP servers"
        onClick={() => {
          setList(null)
          setError(null)
          setOpen((o) => !o)
        }}
      >
        Attach
      </button>
      {open && (
        <div
          className="resource-picker"
          id={id}
          role="dialog"
          aria-label="Resources of this chat's MCP servers"
        >
          {error && <p className="form-error">{error}</p>}
          {!list ? (
            <p>Loading…</p>
          ) : list.length === 0 ? (
            <p>This chat&apos;s MCP servers offer no resources.</p>
          ) : (
            <ul>
              {list.map((r) => (
                <li key={`${r.server_id} ${r.uri}`}>
                  <button type="button" className="resource-item" onClick={() => void attach(r)}>
                    <strong>{r.name}</strong>
                    <code>{r.uri}</code>
                    {r.description && <span className="slash-desc">{r.description}</span>}
                  </button>
                </li>
              ))}
            </ul>
          )}
          <button type="button" className="btn btn-small" onClick={() => setOpen(false)}>
            Close
          </button>
        </div>
      )}
    </div>
  )
}
