import { ArborError } from '../../../src-shared/errors'
import type { ChatExportResult, ExportFormat, SessionMessage } from '../../../src-shared/types'
import type { ForwardRange, SessionRow, Store } from '../../store'
import { CHAT_FILE_FORMAT, CHAT_FILE_VERSION, type ChatFileSession } from './format'
import { cutText } from '../../../src-shared/cut-text'
import { breathe } from './breathe'
import { chatMarkdown } from './markdown'

/** Messages an export reads (and writes out) per turn of the event loop, and seqs it reads. */
const PAGE = 500
const SEQ_PAGE = 10_000

/**
 * A session's visible lineage above seq `after`, oldest first, a page of `size` per turn of the
 * event loop (a chat may be long), up to its last message when the export began: what is added
 * meanwhile is not in it. Each page can go once it is written out. Read whole first (newest
 * first, then reversed), 100,000 messages outlived the young generation: the scavenges that
 * copied them, and the mark-compacts of the old space they filled, held the event loop for
 * 25-45 ms. `read` is the store's call for a range (the messages, or only their seqs).
 */
async function* forwardPages<T>(
  read: (session_id: string, range: ForwardRange) => T[],
  row: SessionRow,
  after: number,
  size: number,
  seqOf: (item: T) => number,
): AsyncGenerator<T[], void, undefined> {
  for (;;) {
    const page = read(row.session_id, { after_seq: after, upto_seq: row.last_seq, limit: size })
    if (page.length > 0) yield page
    if (page.length < size) return
    after = seqOf(page[page.length - 1]!)
    await breathe()
  }
}

/** The session's messages, a page at a time (forwardPages). */
const lineagePages = (store: Store, row: SessionRow, after: number) =>
  forwardPages(
    (id, range) => store.readMessages(id, range),
    row,
    after,
    PAGE,
    (m) => m.seq,
  )

/** The seqs of the messages lineagePages reads, ahead of them (a file numbers them first). */
async function lineageSeqs(store: Store, row: SessionRow, after: number): Promise<number[]> {
  const seqs: number[] = []
  const pages = forwardPages(
    (id, range) => store.messageSeqs(id, range),
    row,
    after,
    SEQ_PAGE,
    (seq) => seq,
  )
  for await (const page of pages) for (const seq of page) seqs.push(seq)
  return seqs
}

/** Every visible message of a session's lineage (as lineagePages reads it), oldest first. */
export async function lineageMessages(store: Store, row: SessionRow): Promise<SessionMessage[]> {
  const out: SessionMessage[] = []
  for await (const page of lineagePages(store, row, 0)) for (const m of page) out.push(m)
  // Cleared or removed meanwhile: what was read is no longer the chat.
  if (store.getSession(row.session_id)?.visible_from_seq !== row.visible_from_seq) throw changed()
  return out
}

const changed = () =>
  new ArborError(
    'conflict',
    'The chat changed while it was exported (messages were removed or cleared meanwhile). Export it again.',
  )

/** How many of a lineage's seqs (ascending) are below `seq`: a binary search. */
function countBelow(lineage: number[], seq: number): number {
  let lo = 0
  let hi = lineage.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (lineage[mid]! < seq) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** A start seq (visible_from / context_from) of the database, in a lineage's file numbering. */
function fileStart(seq: number, lineage: number[]): number {
  return seq <= 0 ? 0 : countBelow(lineage, seq) + 1
}

function fileMessage(m: SessionMessage, seq: number): ChatFileSession['messages'][number] {
  return {
    message_id: m.message_id,
    seq,
    role: m.role,
    kind: m.kind,
    status: m.status,
    parts: m.parts.map((p) => {
      if (p.type !== 'tool_call' || !p.progress) return p
      const { progress: _live, ...rest } = p
      return rest
    }),
    revision: m.revision,
    ...(m.turn_id ? { turn_id: m.turn_id } : {}),
    ...(m.error_code ? { error_code: m.error_code } : {}),
    ...(m.model ? { model: m.model } : {}),
    ...(m.usage ? { usage: m.usage } : {}),
    created_at: m.created_at,
    updated_at: m.updated_at,
  }
}

/** A file name from a title: letters, digits and dashes, never empty. */
export function fileName(title: string, ext: string): string {
  const base =
    title
      .normalize('NFKD')
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'chat'
  return `${base}.${ext}`
}

/**
 * The chat and the tree of forks below it as the file's JSON, into `out` in small pieces (a
 * message a line), a page of messages read and written out per turn of the event loop (the whole
 * file in one JSON.stringify stopped the app for as long as it took). Renumbered: the chat's
 * visible history becomes seqs 1..n, and each fork's own messages continue from its fork point in
 * its parent's numbering, so a session's seqs are read ahead of its messages. The rows, the file
 * as objects and its text were all held at once before (a 54 MB export grew the host's heap by
 * 269 MB).
 */
async function filePieces(
  store: Store,
  root: SessionRow,
  now: number,
  out: { push(piece: string): void },
  app?: string,
): Promise<void> {
  const head = {
    format: CHAT_FILE_FORMAT,
    version: CHAT_FILE_VERSION,
    exported_at: now,
    ...(app ? { app } : {}),
  }
  // `{ …head, "sessions": [` as JSON.stringify writes it with one space of indent.
  const top = JSON.stringify({ ...head, sessions: [] }, null, 1)
  out.push(`${top.slice(0, top.lastIndexOf('[]'))}[\n`)
  // Each exported session's lineage as database seqs, in file order (file seq = index + 1).
  const lineages = new Map<string, number[]>()
  let sessions = 0
  const visit = async (row: SessionRow, parent: SessionRow | null) => {
    // A turn of the event loop per session: a chat may have many forks of a long history.
    await breathe()
    // A fork's own messages only: what it inherits is its parent's, in the file already (reading
    // it again made exporting a chat with 15 forks of its 100,000 messages take 30 s, not 2).
    const after = parent ? row.fork_seq : 0
    const seqs = await lineageSeqs(store, row, after)
    const above = parent ? lineages.get(parent.session_id)! : []
    const inherited = above.slice(0, countBelow(above, row.fork_seq + 1))
    const lineage = [...inherited, ...seqs]
    lineages.set(row.session_id, lineage)
    const session: Omit<ChatFileSession, 'messages'> = {
      session_id: row.session_id,
      parent_session_id: parent?.session_id ?? null,
      fork_seq: inherited.length,
      title: row.title,
      model: row.model,
      created_at: row.created_at,
      updated_at: row.updated_at,
      visible_from_seq: parent ? fileStart(row.visible_from_seq, lineage) : 0,
      context_from_seq: fileStart(row.context_from_seq, lineage),
    }
    const open = JSON.stringify({ ...session, messages: [] })
    out.push(`${sessions++ ? ',\n' : ''}  ${open.slice(0, -3)}[\n`)
    let k = 0
    for await (const page of lineagePages(store, row, after))
      for (const m of page) {
        if (m.seq !== seqs[k]) throw changed()
        out.push(`${k ? ',\n' : ''}   ${JSON.stringify(fileMessage(m, inherited.length + k + 1))}`)
        k++
      }
    if (k !== seqs.length) throw changed()
    out.push('\n  ]}')
    // Not a fork made meanwhile past what was written of this session.
    for (const child of store.forksOf(row.session_id))
      if (child.fork_seq <= row.last_seq) await visit(child, row)
  }
  await visit(root, null)
  out.push('\n ]\n}\n')
}

/**
 * Small pieces joined into parts of at most `size` characters as they come. Each piece lives only
 * until its part is joined: held until the whole file was written (100,000 pieces of a 54 MB
 * export), they outlived the young generation, so every scavenge on the way copied megabytes of
 * them (a pause of 25 ms in the host, with the mark-compacts of an old space they then filled).
 */
class Parts {
  readonly parts: string[] = []
  private run: string[] = []
  private length = 0

  constructor(private readonly size: number) {}

  push(piece: string): void {
    this.run.push(piece)
    this.length += piece.length
    if (this.length < this.size) return
    // Whole parts out; what is left over begins the next one.
    const cut = cutText(this.run.join(''), this.size)
    const rest = cut.at(-1)!.length < this.size ? cut.pop()! : ''
    this.parts.push(...cut)
    this.run = rest ? [rest] : []
    this.length = rest.length
  }

  /** The last part, and every part. */
  end(): string[] {
    if (this.length) this.parts.push(this.run.join(''))
    this.run = []
    this.length = 0
    return this.parts
  }
}

/** The chat as a file to download: Markdown to read, or JSON (with its forks) to import back. */
export async function exportChat(
  store: Store,
  session_id: string,
  format: ExportFormat,
  now: number,
): Promise<ChatExportResult> {
  const { parts, chars: _chars, ...file } = await exportChatParts(store, session_id, format, now, JOIN_PART)
  // Joined from parts of a megabyte: the same join from 100,000 small pieces held the loop 62 ms.
  return { ...file, text: parts.join('') }
}

/** What exportChat gathers the small pieces into (a turn of the event loop each) before the join. */
const JOIN_PART = 1024 * 1024

/** The file in parts of at most `size` characters, never joined into one string. */
export async function exportChatParts(
  store: Store,
  session_id: string,
  format: ExportFormat,
  now: number,
  size: number,
): Promise<Omit<ChatExportResult, 'text' | 'parts'> & { parts: string[]; chars: number }> {
  const parts = new Parts(size)
  const file = await exportInto(parts, store, session_id, format, now)
  return { ...file, parts: parts.end(), chars: parts.parts.reduce((n, p) => n + p.length, 0) }
}

/** Writes the file into `out`; answers what it is. */
async function exportInto(
  out: Parts,
  store: Store,
  session_id: string,
  format: ExportFormat,
  now: number,
): Promise<Omit<ChatExportResult, 'text' | 'parts'>> {
  const row = store.getSession(session_id)!
  if (format === 'json') {
    await filePieces(store, row, now, out, 'Arbor')
    return { format, filename: fileName(row.title, 'json'), mime_type: 'application/json' }
  }
  const messages = await lineageMessages(store, row)
  const pieces = await chatMarkdown(row, messages, store.forksOf(session_id), now)
  for (let i = 0; i < pieces.length; i++) {
    const had = out.parts.length
    out.push(pieces[i]!)
    // Taken: the pieces go as the parts grow, so the file is not held twice over; a part per
    // turn of the event loop (joining a 30 MB file at once held it for tens of milliseconds).
    pieces[i] = ''
    if (out.parts.length > had) await breathe()
  }
  return { format, filename: fileName(row.title, 'md'), mime_type: 'text/markdown' }
}
