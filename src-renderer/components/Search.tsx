import { useEffect } from 'react'
import { useActions, useApp } from '../state/hooks'
import { SearchIcon } from './Icons'

export const SEARCH_ID = 'session-search'

/** The search field: full-text search over every session's messages (debounced). */
export function SearchBox() {
  const text = useApp((s) => s.search.query)
  const { search, setQuery, clearSearch } = useActions()

  useEffect(() => {
    if (!text.trim()) return
    const timer = setTimeout(() => void search(text), 180)
    return () => clearTimeout(timer)
  }, [text, search])

  return (
    <div className="search-box">
      <SearchIcon />
      <input
        id={SEARCH_ID}
        type="search"
        className="search-input"
        aria-label="Search messages"
        placeholder="Search all messages"
        value={text}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation()
            clearSearch()
          } else if (e.key === 'ArrowDown') {
            e.preventDefault()
            document.querySelector<HTMLElement>('.search-hit')?.focus()
          }
        }}
      />
    </div>
  )
}

/** Snippets are raw message text: drop the markdown marks that read as noise in a preview. */
function plain(snippet: string): string {
  return snippet
    .replace(/(\*\*|__|`+)/g, '')
    .replace(/(^|…|\s)>\s/g, '$1')
    .replace(/\s+/g, ' ')
}

/** Marks the query's words inside a snippet. */
function Highlighted({ text, query }: { text: string; query: string }) {
  const terms = query
    .split(/[^\p{L}\p{N}_]+/u)
    .filter(Boolean)
    .map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  if (terms.length === 0) return <>{text}</>
  const re = new RegExp(`(${terms.join('|')})`, 'giu')
  return <>{text.split(re).map((piece, i) => (i % 2 === 1 ? <mark key={i}>{piece}</mark> : piece))}</>
}

/**
 * While older messages are indexed in the background (a database from before write-time
 * indexing), how far it has come: search answers meanwhile, from what is indexed so far.
 */
export function IndexProgress() {
  const p = useApp((s) => s.app?.search_index)
  if (!p || p.done || p.total === 0) return null
  const pct = Math.min(99, Math.floor((p.indexed_upto / p.total) * 100))
  return (
    <div className="index-progress" role="status">
      <span>Indexing older messages for search: {pct}% — results may be incomplete until it is done.</span>
      <progress max={100} value={pct} aria-label="Search index progress" />
    </div>
  )
}

/** Hits with their snippets; opening one scrolls its session to the message. */
export function SearchResults() {
  const { query, hits, loading } = useApp((s) => s.search)
  const { openAt, clearSearch } = useActions()
  const focused = useApp((s) => s.focus?.message_id ?? null)
  return (
    <section className="search-results" aria-label="Search results" aria-busy={loading}>
      <div className="search-summary">
        {hits === null ? 'Searching…' : `${hits.length} ${hits.length === 1 ? 'match' : 'matches'}`}
        <button type="button" className="btn btn-small btn-ghost" onClick={clearSearch}>
          Clear
        </button>
      </div>
      <IndexProgress />
      {hits && hits.length === 0 && <p className="sidebar-empty">No message contains “{query.trim()}”.</p>}
      {hits && hits.length > 0 && (
        <ul className="hit-list">
          {hits.map((h) => (
            <li key={`${h.session_id}:${h.message_id}`}>
              <button
                type="button"
                className="search-hit"
                aria-current={focused === h.message_id ? 'true' : undefined}
                onClick={() => void openAt(h.session_id, h.message_id)}
                onKeyDown={(e) => {
                  const li = e.currentTarget.parentElement
                  if (e.key === 'ArrowDown') {
                    e.preventDefault()
                    li?.nextElementSibling?.querySelector<HTMLElement>('button')?.focus()
                  } else if (e.key === 'ArrowUp') {
                    e.preventDefault()
                    const prev = li?.previousElementSibling?.querySelector<HTMLElement>('button')
                    if (prev) prev.focus()
                    else document.querySelector<HTMLElement>('.search-input')?.focus()
                  }
                }}
              >
                <span className="hit-title">{h.session_title}</span>
                <span className="hit-snippet">
                  <Highlighted text={plain(h.snippet)} query={query} />
                </span>
                <span className="hit-time">{new Date(h.created_at).toLocaleString()}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
