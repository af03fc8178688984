import { ArborError } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import type { MessagePart, SecurityMode, SessionMessage } from '../../../src-shared/types'
import { rootSessionRow, type SessionRow, type Store } from '../../store'
import type { Model } from '../models/types'
import { CHAT_FILE_FORMAT, CHAT_FILE_VERSION, chatFile, type ChatFile, type ChatFileMessage } from './format'

const AGAIN = 'Export the chat again from Arbor (⋯ → Export as JSON) and import that file.'

/** Reads a chat file, or says what is wrong with it: not one, too new, or damaged. */
export function parseChatFile(data: string): ChatFile {
  let raw: unknown
  try {
    raw = JSON.parse(data)
  } catch {
    throw new ArborError(
      'invalid_request',
      'This file is not an Arbor chat export: it is not JSON. Choose the .json file that Export as JSON saved.',
    )
  }
  const head = raw && typeof raw === 'object' ? (raw as { format?: unknown; version?: unknown }) : {}
  if (head.format !== CHAT_FILE_FORMAT)
    throw new ArborError(
      'invalid_request',
      `This file is not an Arbor chat export (it has no "format": "${CHAT_FILE_FORMAT}"). Choose the .json file that Export as JSON saved.`,
    )
  if (typeof head.version === 'number' && head.version > CHAT_FILE_VERSION)
    throw new ArborError(
      'invalid_request',
      `This chat was exported by a newer Arbor (file format version ${head.version}; this one reads up to ${CHAT_FILE_VERSION}). Update Arbor, then import it again.`,
    )
  const parsed = chatFile.safeParse(raw)
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || 'the file'}: ${i.message}`)
      .join('; ')
    throw new ArborError('invalid_request', `This chat file is damaged (${issues}). ${AGAIN}`)
  }
  checkStructure(parsed.data)
  return parsed.data
}

/** What the schema cannot see: one chat at the root, parents first, seqs without gaps. */
function checkStructure(file: ChatFile): void {
  const damaged = (what: string) =>
    new ArborError('invalid_request', `This chat file is damaged: ${what}. ${AGAIN}`)
  const lastSeq = new Map<string, number>()
  const messageIds = new Set<string>()
  file.sessions.forEach((s, i) => {
    if (lastSeq.has(s.session_id)) throw damaged(`the session ${s.session_id} appears twice`)
    if ((i === 0) !== (s.parent_session_id === null))
      throw damaged(i === 0 ? 'its first session is a fork' : `the session ${s.session_id} names no parent`)
    if (s.parent_session_id !== null) {
      const parentLast = lastSeq.get(s.parent_session_id)
      if (parentLast === undefined)
        throw damaged(`the fork ${s.session_id} comes before its parent ${s.parent_session_id}, or has none`)
      if (s.fork_seq > parentLast)
        throw damaged(`the fork ${s.session_id} starts after the end of its parent`)
    } else if (s.fork_seq !== 0) throw damaged('the chat itself has a fork point')
    s.messages.forEach((m, k) => {
      if (m.seq !== s.fork_seq + k + 1)
        throw damaged(
          `message ${m.message_id} of ${s.session_id} is out of order (seq ${m.seq}, expected ${s.fork_seq + k + 1})`,
        )
      if (messageIds.has(m.message_id)) throw damaged(`the message ${m.message_id} appears twice`)
      messageIds.add(m.message_id)
    })
    const last = s.fork_seq + s.messages.length
    if (s.visible_from_seq > last + 1 || s.context_from_seq > last + 1)
      throw damaged(`the session ${s.session_id} starts past its last message`)
    lastSeq.set(s.session_id, last)
  })
}

const UNSETTLED_CALLS = new Set(['streaming_input', 'pending_approval', 'approved', 'running'])

/**
 * A part as an imported chat keeps it: nothing is in flight in a chat that was just imported,
 * so a call or an approval that was still open when it was exported is shown as cancelled.
 */
function settledPart(p: ChatFileMessage['parts'][number]): MessagePart {
  if (p.type === 'tool_call' && UNSETTLED_CALLS.has(p.status))
    return { ...p, status: 'cancelled' } as MessagePart
  if (p.type === 'interaction' && p.status === 'pending') return { ...p, status: 'cancelled' } as MessagePart
  return p as MessagePart
}

export interface ImportOptions {
  defaults: { model: string; security: SecurityMode; plugins: string[] }
  models: Map<string, Model>
  now: number
}

/**
 * Recreates a chat file's chat and its forks in one transaction: all of it, or (on any
 * failure) nothing. Ids are kept where they are free and new where they are taken, so the same
 * file imported twice gives two copies. Forks are made as Arbor makes them (copy-on-write from
 * a checkpoint of the parent at the fork point). Answers the new rows, the chat first.
 */
export function importChat(store: Store, data: string, opts: ImportOptions): SessionRow[] {
  const file = parseChatFile(data)
  return store.transaction(() => {
    const ids = new Map<string, string>()
    // Each session's lineage as new message ids (file seq = index + 1), for fork points.
    const lineages = new Map<string, string[]>()
    const out: SessionRow[] = []
    for (const s of file.sessions) {
      const session_id = store.sessionIdTaken(s.session_id) ? newId('ses') : s.session_id
      ids.set(s.session_id, session_id)
      const model = opts.models.has(s.model) ? s.model : opts.defaults.model
      const parentId = s.parent_session_id === null ? null : ids.get(s.parent_session_id)!
      const inherited = parentId ? lineages.get(parentId)!.slice(0, s.fork_seq) : []
      if (parentId === null) {
        store.createSession(
          rootSessionRow({
            session_id,
            title: s.title,
            created_at: s.created_at,
            updated_at: opts.now,
            model,
            security: opts.defaults.security,
            env: {},
            plugins: opts.defaults.plugins,
            visible_from_seq: s.visible_from_seq,
            context_from_seq: s.context_from_seq,
          }),
        )
      } else {
        const parent = store.getSession(parentId)!
        const state = {
          title: parent.title,
          model: parent.model,
          security: parent.security,
          env: parent.env,
          plugins: parent.plugins,
          visible_from_seq: s.visible_from_seq,
          context_from_seq: Math.min(parent.context_from_seq, s.fork_seq),
        }
        const source = store.commit_session_snapshot({
          session_id: parentId,
          expected_snapshot_id: parent.head_snapshot_id,
          head_seq: s.fork_seq,
          reason: 'fork_source',
          state,
        })
        store.forkSession({
          parent,
          child_session_id: session_id,
          fork_seq: s.fork_seq,
          fork_message_id: inherited[inherited.length - 1] ?? null,
          source_snapshot: source,
          operation_id: null,
          title: s.title,
          now: s.created_at,
        })
        store.updateSession(session_id, { model, context_from_seq: s.context_from_seq })
      }
      const own: string[] = []
      for (const m of s.messages) {
        const message_id = store.getMessage(m.message_id) ? newId('msg') : m.message_id
        const message: Omit<SessionMessage, 'seq'> = {
          message_id,
          session_id,
          role: m.role,
          kind: m.kind,
          status: m.status === 'streaming' ? 'interrupted' : m.status,
          parts: m.parts.map(settledPart),
          revision: m.revision ?? 1,
          created_at: m.created_at,
          updated_at: m.updated_at,
          ...(m.turn_id ? { turn_id: m.turn_id } : {}),
          ...(m.error_code ? { error_code: m.error_code } : {}),
          ...(m.model ? { model: m.model } : {}),
          ...(m.usage ? { usage: m.usage } : {}),
        }
        store.insertMessage(message)
        own.push(message_id)
      }
      lineages.set(session_id, [...inherited, ...own])
      // Listed as just imported (the newest activity), so it is found at the top of the list.
      store.updateSession(session_id, { updated_at: opts.now })
      const row = store.getSession(session_id)!
      store.commit_session_snapshot({
        session_id,
        expected_snapshot_id: row.head_snapshot_id,
        head_seq: row.last_seq,
        reason: 'import',
        state: {
          title: row.title,
          model: row.model,
          security: row.security,
          env: row.env,
          plugins: row.plugins,
          visible_from_seq: row.visible_from_seq,
          context_from_seq: row.context_from_seq,
        },
      })
      out.push(store.getSession(session_id)!)
    }
    return out
  })
}
