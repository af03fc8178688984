import { useEffect } from 'react'
import { queryWords } from '../../src-shared/search-words'
import type { SearchHit } from '../../src-shared/types'
import { useActions, useApp } from '../state/hooks'
import { SEARCH_MOST } from '../state/slices/search'
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

/** Marks the query's words inside a snippet (the words as search splits them, emoji included). */
function Highlighted({ text, query }: { text: string; query: string }) {
  const terms = queryWords(query).map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  if (terms.length === 0) return <>{text}</>
  const re = new RegExp(`(${terms.join('|')})`, 'giu')
  return <>{text.split(re).map((piece, i) => (i % 2 === 1 ? <mark key={i}>{piece}</mark> : piece))}</>
}

/** Hits grouped by chat, in the order the chats first appear (titles first, then newest messages). */
interface HitGroup {
  session_id: string
  title: string
  title_match: boolean
  messages: SearchHit[]
}

function groupByChat(hits: SearchHit[]): HitGroup[] {
  const groups = new Map<string, HitGroup>()
  for (const h of hits) {
    let g = groups.get(h.session_id)
    if (!g) {
      g = { session_id: h.session_id, title: h.session_title, title_match: false, messages: [] }
      groups.set(h.session_id, g)
    }
    if (h.match === 'title') g.title_match = true
    else g.messages.push(h)
  }
  return [...groups.values()]
}

/** Arrow keys move through every hit button in order; up from the first goes back to the field. */
function moveFocus(e: React.KeyboardEvent<HTMLButtonElement>) {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return
  e.preventDefault()
  const all = [...document.querySelectorAll<HTMLElement>('.search-results .search-hit')]
  const i = all.indexOf(e.currentTarget)
  const next = all[e.key === 'ArrowDown' ? i + 1 : i - 1]
  if (next) next.focus()
  else if (e.key === 'ArrowUp') document.querySelector<HTMLElement>('.search-input')?.focus()
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

/**
 * A chat's row in the results, named so that what it shows ("Tour" "3", or "Lisbon trip"
 * "title") reads, in order, inside its name: "Tour, 3 messages", "Lisbon trip, title matches".
 */
function hitChatName(title: string, titleMatch: boolean, messages: number): string {
  if (messages === 0) return `${title}, title matches`
  return `${title}, ${messages} ${messages === 1 ? 'message' : 'messages'}${titleMatch ? ', title matches' : ''}`
}

/** Hits grouped by chat; a chat's header opens it, a message hit scrolls its chat to the message. */
export function SearchResults() {
  const { query, hits, loading, limit } = useApp((s) => s.search)
  const { openAt, openSession, clearSearch, searchMore } = useActions()
  const focused = useApp((s) => s.focus?.message_id ?? null)
  const openId = useApp((s) => s.transcript?.session_id ?? null)
  const groups = hits ? groupByChat(hits) : []
  const messageCount = hits ? hits.filter((h) => h.match === 'message').length : 0
  // As many as were asked for: there may be more, older ones (the newest come first).
  const capped = messageCount >= limit
  const chats = `${groups.length} ${groups.length === 1 ? 'chat' : 'chats'}`
  return (
    <section className="search-results" aria-label="Search results" aria-busy={loading}>
      <div className="search-summary">
        {hits === null
          ? 'Searching…'
          : capped
            ? `Newest ${messageCount} matches in ${chats}`
            : `${messageCount} ${messageCount === 1 ? 'message' : 'messages'} in ${chats}`}
        <button type="button" className="btn btn-small btn-ghost" onClick={clearSearch}>
          Clear
        </button>
      </div>
      <IndexProgress />
      {hits && hits.length === 0 && (
        <p className="sidebar-empty">No chat or message contains “{query.trim()}”.</p>
      )}
      {groups.length > 0 && (
        <ul className="hit-groups">
          {groups.map((g) => (
            <li key={g.session_id} className="hit-group">
              <button
                type="button"
                className="search-hit hit-chat"
                aria-current={openId === g.session_id && !focused ? 'true' : undefined}
                aria-label={hitChatName(g.title, g.title_match, g.messages.length)}
                onClick={() => void openSession(g.session_id)}
                onKeyDown={moveFocus}
              >
                <span className="hit-title">
                  {g.title_match ? <Highlighted text={g.title} query={query} /> : g.title}
                </span>
                {/* The space keeps "Tour" and "3" two words where the texts are read joined. */}
                <span className="hit-count"> {g.messages.length > 0 ? g.messages.length : 'title'}</span>
              </button>
              {g.messages.length > 0 && (
                <ul className="hit-list" aria-label={`Matches in ${g.title}`}>
                  {g.messages.map((h) => (
                    <li key={h.message_id}>
                      <button
                        type="button"
                        className="search-hit"
                        aria-current={focused === h.message_id ? 'true' : undefined}
                        onClick={() => h.message_id && void openAt(h.session_id, h.message_id)}
                        onKeyDown={moveFocus}
                      >
                        <span className="hit-snippet">
                          <Highlighted text={plain(h.snippet)} query={query} />
                        </span>
                        <span className="hit-time">{new Date(h.created_at).toLocaleString()}</span>
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      {capped &&
        (limit < SEARCH_MOST ? (
          <button
            type="button"
            className="btn btn-small search-more"
            disabled={loading}
            onClick={() => void searchMore()}
          >
            Show older matches
          </button>
        ) : (
          <p className="sidebar-empty">
            Only the newest {limit} matches are shown: add a word to find older ones.
          </p>
        ))}
    </section>
  )
}
