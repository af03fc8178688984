import Database from 'better-sqlite3'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ArborError } from '../../src-shared/errors'
import type { MessagePart } from '../../src-shared/types'

export interface ExportReport {
  dir: string
  sessions: number
  messages: number
  /** Sessions (or the session list itself) that could not be read, with why. */
  unreadable: Array<{ session_id: string; error: string }>
}

function partText(p: MessagePart): string {
  if (p.type === 'text') return p.text
  if (p.type === 'reasoning') return `> (reasoning) ${p.text.replace(/\n/g, '\n> ')}`
  if (p.type === 'tool_call')
    return `[tool ${p.name} (${p.status})] ${p.input_text}${p.output !== undefined ? `\n→ ${JSON.stringify(p.output)}` : ''}${p.error ? `\n→ ${p.error}` : ''}`
  if (p.type === 'attachment')
    return p.text !== undefined ? `[attached ${p.name}]\n${p.text}` : `[attached image ${p.name}]`
  return `[${p.kind}: ${p.description ?? p.question ?? ''} — ${p.status}]`
}

/**
 * Reads a database without writing to it — also a damaged one — and writes every session it
 * can read to `outDir` as Markdown (for people) and JSON (for tools). Each session is read on
 * its own, so damage in one does not cost the others. A fork's files hold the messages it added;
 * the ones it inherited are in its parent's files.
 */
export function exportReadOnly(dataDir: string, outDir: string): ExportReport {
  let db: Database.Database
  try {
    db = new Database(join(dataDir, 'arbor.db'), { readonly: true, fileMustExist: true })
  } catch (err) {
    throw new ArborError(
      'store_error',
      `Could not open ${join(dataDir, 'arbor.db')} to export it: ${String(err)}`,
    )
  }
  mkdirSync(outDir, { recursive: true })
  const report: ExportReport = { dir: outDir, sessions: 0, messages: 0, unreadable: [] }
  try {
    let sessions: Array<{
      session_id: string
      title: string
      created_at: number
      parent_session_id: string | null
    }>
    try {
      sessions = db
        .prepare('SELECT session_id, title, created_at, parent_session_id FROM sessions ORDER BY created_at')
        .all() as typeof sessions
    } catch (err) {
      report.unreadable.push({ session_id: '(the session list)', error: String(err) })
      sessions = []
    }
    const rows = db.prepare(
      'SELECT seq, message_id, role, kind, status, created_at, parts FROM messages WHERE session_id = ? ORDER BY seq',
    )
    for (const s of sessions) {
      try {
        type Row = {
          seq: number
          message_id: string
          role: string
          kind: string
          status: string
          created_at: number
          parts: string
        }
        const messages = (rows.all(s.session_id) as Row[]).map((m) => ({
          ...m,
          parts: JSON.parse(m.parts) as MessagePart[],
        }))
        const md = [
          `# ${s.title}`,
          '',
          `Session ${s.session_id}, created ${new Date(s.created_at).toISOString()}${s.parent_session_id ? `, forked from ${s.parent_session_id}` : ''}.`,
          '',
          ...messages.map(
            (m) =>
              `## ${m.role}${m.kind !== 'text' ? ` (${m.kind})` : ''}\n\n${m.parts.map(partText).join('\n\n')}\n`,
          ),
        ].join('\n')
        writeFileSync(join(outDir, `${s.session_id}.md`), md)
        writeFileSync(join(outDir, `${s.session_id}.json`), JSON.stringify({ ...s, messages }, null, 1))
        report.sessions++
        report.messages += messages.length
      } catch (err) {
        report.unreadable.push({
          session_id: s.session_id,
          error: err instanceof Error ? err.message : String(err),
        })
      }
    }
    writeFileSync(join(outDir, 'export-report.json'), JSON.stringify(report, null, 1))
    return report
  } finally {
    db.close()
  }
}
