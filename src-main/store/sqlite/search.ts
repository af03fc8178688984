import type { SearchHit, SessionMessage } from '../../../src-shared/types'
import type { Db, Row } from './db'
import { toMessage } from './rows'

/** How many of the newest matches a search looks at before it filters (removed, cleared) and cuts. */
const SEARCH_CANDIDATES = 2000

/**
 * Full-text search over one connection (the store's, or the search worker's read-only one).
 * Newest matches first, with early termination: FTS5 walks a term's matches in rowid order, so
 * a common word costs the candidates it reads (at most SEARCH_CANDIDATES), not every match.
 */
export function prepareSearch(db: Db): (query: string, limit: number) => SearchHit[] {
  const stmt = db.prepare(`SELECT m.*, s.title AS session_title
    FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ${SEARCH_CANDIDATES}) f
    JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.session_id = m.session_id
    WHERE s.removed = 0 AND m.seq >= s.visible_from_seq ORDER BY m.id DESC LIMIT ?`)
  return (query, limit) => {
    const terms = query
      .split(/[^\p{L}\p{N}_]+/u)
      .filter(Boolean)
      .slice(0, 16)
    if (terms.length === 0) return []
    const match = terms.map((t) => `"${t}"*`).join(' ')
    return (stmt.all(match, limit) as Row[]).map((r) => {
      const m = toMessage(r)
      return {
        session_id: m.session_id,
        session_title: r.session_title as string,
        message_id: m.message_id,
        snippet: snippet(messageText(m.parts), terms),
        created_at: m.created_at,
      }
    })
  }
}

/** Plain text of a message, for search. */
export function messageText(parts: SessionMessage['parts']): string {
  return parts
    .map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : p.type === 'tool_call' ? p.name : ''))
    .filter(Boolean)
    .join('\n')
}

/** A short excerpt around the first matching term. */
function snippet(text: string, terms: string[]): string {
  const lower = text.toLowerCase()
  let at = -1
  for (const t of terms) {
    const i = lower.indexOf(t.toLowerCase())
    if (i >= 0 && (at < 0 || i < at)) at = i
  }
  const start = Math.max(0, at - 60)
  const end = Math.min(text.length, (at < 0 ? 0 : at) + 120)
  return `${start > 0 ? '…' : ''}${text.slice(start, end).replace(/\s+/g, ' ')}${end < text.length ? '…' : ''}`
}
