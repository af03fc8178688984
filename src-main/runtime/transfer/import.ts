import { ArborError } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import type { MessagePart, SecurityMode, SessionMessage } from '../../../src-shared/types'
import { rootSessionRow, type SessionRow, type Store } from '../../store'
import { holdForCheckpoint, inChunks, NO_HOLD, whenFree, type WriterHold } from '../../store/checkpoint-pace'
import type { Model } from '../models/types'
import { breathe } from './breathe'
import type { ChatFile, ChatFileMessage } from './format'
import { AGAIN, openChatFile } from './read'

/** Messages written per transaction, with a turn of the event loop between two, by an import. */
const IMPORT_CHUNK = 250
/** Messages deleted per transaction when an import that failed (or never ended) is discarded. */
const DISCARD_CHUNK = 2000

const damaged = (what: string) =>
  new ArborError('invalid_request', `This chat file is damaged: ${what}. ${AGAIN}`)

/**
 * What the schema cannot see of the sessions (`counts`: how many messages each has): one chat at
 * the root, parents first, forks within their parents, starts within their messages.
 */
function checkSessions(file: ChatFile, counts: number[]): void {
  const lastSeq = new Map<string, number>()
  for (const [i, s] of file.sessions.entries()) {
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
    const last = s.fork_seq + counts[i]!
    if (s.visible_from_seq > last + 1 || s.context_from_seq > last + 1)
      throw damaged(`the session ${s.session_id} starts past its last message`)
    lastSeq.set(s.session_id, last)
  }
}

/** Of each message, in file order (the `k`th of its session): seqs without gaps, no id twice. */
function messageCheck() {
  const messageIds = new Set<string>()
  return (s: ChatFile['sessions'][number], k: number, m: ChatFileMessage): void => {
    if (m.seq !== s.fork_seq + k + 1)
      throw damaged(
        `message ${m.message_id} of ${s.session_id} is out of order (seq ${m.seq}, expected ${s.fork_seq + k + 1})`,
      )
    if (messageIds.has(m.message_id)) throw damaged(`the message ${m.message_id} appears twice`)
    messageIds.add(m.message_id)
  }
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
  /** The checkpoint thread's request to hold the next chunk (holdForCheckpoint). */
  holdWriters?: WriterHold
  /** After each chunk written: messages written so far, of all the file's. */
  onProgress?: (done: number, total: number) => void
}

/**
 * Recreates a chat file's chat and its forks: all of it, or (on any failure) nothing anyone
 * sees. The file is read, and its messages written, a chunk at a time with the event loop free
 * between chunks (50,000 messages in one transaction held every window and stream for 4.6 s);
 * they are written under reserved session ids with no session row yet, and the sessions
 * themselves are created in one last transaction. Until then nothing lists, opens or finds the
 * chat; an import that fails is discarded, and one cut short by a crash at the next open.
 * Ids are kept where they are free and new where they are taken, so the same file imported
 * twice gives two copies. Forks are made as Arbor makes them (copy-on-write from a checkpoint of
 * the parent at the fork point). Answers the new rows, the chat first.
 */
export function importChat(
  store: Store,
  data: string | readonly string[],
  opts: ImportOptions,
): Promise<SessionRow[]> {
  // One at a time per store: a chunk's message ids are checked free, then written (after a
  // wait, when the write lock is someone else's) — another import must not take them meanwhile.
  const next = (imports.get(store) ?? Promise.resolve()).then(() => importOne(store, data, opts))
  imports.set(
    store,
    next.catch(() => undefined),
  )
  return next
}
const imports = new WeakMap<Store, Promise<unknown>>()

async function importOne(
  store: Store,
  data: string | readonly string[],
  opts: ImportOptions,
): Promise<SessionRow[]> {
  // The sessions are checked first; each message as it is read, a chunk at a time, and written:
  // a damaged one found later fails the import, which is then discarded like any other.
  const { file, counts, messages } = await openChatFile(data)
  const hold = opts.holdWriters ?? NO_HOLD
  checkSessions(file, counts)
  const ids = new Map<string, string>()
  for (const s of file.sessions)
    ids.set(s.session_id, store.sessionIdTaken(s.session_id) ? newId('ses') : s.session_id)
  const import_id = newId('imp')
  await whenFree(store, () => store.beginImport(import_id, [...ids.values()], opts.now))
  try {
    // Each session's lineage as new message ids (file seq = index + 1), for fork points.
    const lineages = new Map<string, LineageIds>()
    // The chunk's rows, and its messages of the session being read, as the file has them: their
    // ids are checked when the session ends or the chunk is full (one query for them all: one per
    // message was a third of an import's time).
    let chunk: SessionMessage[] = []
    let unchecked: ChatFileMessage[] = []
    const total = counts.reduce((n, c) => n + c, 0)
    const check = messageCheck()
    let done = 0
    const checkIds = (session_id: string, lineage: LineageIds) => {
      const taken = store.messageIdsTaken(unchecked.map((m) => m.message_id))
      for (const m of unchecked) {
        const message_id = taken.has(m.message_id) ? newId('msg') : m.message_id
        lineage.own.push(message_id)
        chunk.push(importedMessage(m, message_id, session_id))
      }
      unchecked = []
    }
    const written = async () => {
      // Waiting off the event loop while the write lock is someone else's.
      await whenFree(store, () => store.importMessages(import_id, chunk))
      done += chunk.length
      chunk = []
      opts.onProgress?.(done, total)
    }
    opts.onProgress?.(0, total)
    for (const [k, s] of file.sessions.entries()) {
      const session_id = ids.get(s.session_id)!
      const parentId = s.parent_session_id === null ? null : ids.get(s.parent_session_id)!
      const lineage = new LineageIds(parentId ? lineages.get(parentId)! : null, s.fork_seq)
      let index = 0
      for await (const m of messages(k)) {
        check(s, index++, m)
        unchecked.push(m)
        if (chunk.length + unchecked.length >= IMPORT_CHUNK) {
          checkIds(session_id, lineage)
          await written()
          await breathe()
          await holdForCheckpoint(hold)
        }
      }
      // Its forks start from its lineage: all of it is known before the next session is read.
      checkIds(session_id, lineage)
      lineages.set(session_id, lineage)
    }
    if (chunk.length > 0) await written()
    // After the import's last chunk the log is long: the checkpoint thread may be restarting it.
    return await whenFree(store, () => {
      const rows = file.sessions.map((s, k) => createImported(store, s, counts[k]!, ids, lineages, opts))
      store.endImport(import_id)
      return rows
    })
  } catch (err) {
    await discardImport(store, import_id, undefined, hold).catch(() => {
      // Left for the next open (a failing disk fails this too): nothing shows it meanwhile.
    })
    throw err
  }
}

/**
 * A session's message ids in file order (file seq = index + 1): its parent's up to its fork point,
 * then its own. A fork reads its parent's, never copies them: a copy per fork made importing a
 * chat of 100,000 messages with 16 forks hold the event loop 80 ms in one go, after its last chunk.
 */
class LineageIds {
  readonly own: string[] = []

  constructor(
    readonly parent: LineageIds | null,
    readonly from: number,
  ) {}

  at(index: number): string | undefined {
    return idAt(this, index)
  }
}

/** Up the forks (a loop: a file may nest forks deeper than a stack of calls goes). */
function idAt(lineage: LineageIds, index: number): string | undefined {
  let l = lineage
  while (index < l.from && l.parent) l = l.parent
  return l.own[index - l.from]
}

/** A file's message as the database keeps it, at the seq the file gives (a lineage counts from 1). */
function importedMessage(m: ChatFileMessage, message_id: string, session_id: string): SessionMessage {
  return {
    message_id,
    session_id,
    seq: m.seq,
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
}

/** One imported session's row (its messages are written): the chat, or a fork of one before it. */
function createImported(
  store: Store,
  s: ChatFile['sessions'][number],
  count: number,
  ids: Map<string, string>,
  lineages: Map<string, LineageIds>,
  opts: ImportOptions,
): SessionRow {
  const session_id = ids.get(s.session_id)!
  const model = opts.models.has(s.model) ? s.model : opts.defaults.model
  const last_seq = s.fork_seq + count
  if (s.parent_session_id === null) {
    store.createSession({
      ...rootSessionRow({
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
      last_seq,
    })
  } else {
    const parentId = ids.get(s.parent_session_id)!
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
      fork_message_id: s.fork_seq > 0 ? lineages.get(session_id)!.at(s.fork_seq - 1)! : null,
      source_snapshot: source,
      operation_id: null,
      title: s.title,
      now: s.created_at,
    })
    // Listed as just imported (the newest activity), so it is found at the top of the list.
    store.updateSession(session_id, {
      model,
      context_from_seq: s.context_from_seq,
      last_seq,
      updated_at: opts.now,
    })
  }
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
  return store.getSession(session_id)!
}

/**
 * Deletes what an import that did not end wrote, a chunk per transaction with the event loop
 * free between them; once none is left, the import itself (its reserved ids are free again).
 */
export async function discardImport(
  store: Store,
  import_id: string,
  stopped = () => false,
  hold = NO_HOLD,
): Promise<void> {
  await inChunks(store, () => store.discardImport(import_id, DISCARD_CHUNK), stopped, hold, breathe)
}
