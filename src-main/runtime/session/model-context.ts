import type { SessionMessage } from '../../../src-shared/types'
import type { SessionRow, Store } from '../../store'
import { buildModelMessages } from '../context'
import type { Model, ModelMessage } from '../models/types'

/**
 * The model context of each session, assembled incrementally.
 *
 * A session's history only grows at its end, and a message only changes while its turn runs
 * (streaming, tool results, answered approvals). So the context of finished turns is *settled*:
 * kept here as model messages, and each step reads only the messages after it from the store.
 * A fork starts from its parent's settled context up to the fork point. The context is bounded
 * by the model's window: a cold start reads the history newest first and stops once the window
 * is full (or at the last summary, which stands for everything before it), never the whole log.
 */

/** Tokens the model can take when it does not say (the common window of hosted models). */
export const DEFAULT_CONTEXT_TOKENS = 128_000
/** A conservative characters-per-token estimate, so the budget errs on the side of fitting. */
const CHARS_PER_TOKEN = 3
/** Sessions whose settled context is kept (least recently used beyond that are dropped). */
const MAX_SESSIONS = 64
const PAGE = 500
/**
 * Messages a cold read settles between two turns of the event loop. A cold read of a long chat
 * fills the whole window (10,000 short messages in the bench's 100,000-message chat): done in one
 * go it held the host's event loop 104–177 ms, every window and stream with it. Read a page at a
 * time and settled in runs of this many, the longest piece is a few milliseconds.
 */
const SETTLE_RUN = 1000

/** The rest of the work after this turn of the event loop (other windows, streams, requests). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

interface Settled {
  /** Which history this is: the session's context and visibility floors. */
  key: string
  /** Every message up to this seq is settled (included or deliberately left out). */
  upto: number
  /** The window it was trimmed to: a model with a larger one reads the history again. */
  budget: number
  /** One entry per settled message that yields model messages, oldest first. */
  entries: Array<{ seq: number; chars: number; messages: ModelMessage[] }>
  /** The entries' model messages in one array (what every step sends first). */
  flat: ModelMessage[]
  chars: number
}

/** Characters a message costs in the window (text, and tool inputs and outputs as JSON). */
export function messageChars(m: SessionMessage): number {
  let n = 0
  for (const p of m.parts) {
    if (p.type === 'text' || p.type === 'reasoning') n += p.text.length
    else if (p.type === 'tool_call')
      n += JSON.stringify(p.input ?? null).length + JSON.stringify(p.output ?? p.error ?? null).length
  }
  return n
}

/** The first seq after the settled part that the model context may hold. */
function unsettledFrom(row: SessionRow, s: Settled): number {
  return Math.max(row.context_from_seq, s.upto + 1)
}

function keyOf(row: SessionRow): string {
  return `${row.context_from_seq}:${row.visible_from_seq}`
}

/** The window in characters for a model: its context window, less room for its reply. */
export function budgetFor(model: Pick<Model, 'context_window'>): number {
  const tokens = model.context_window ?? DEFAULT_CONTEXT_TOKENS
  return Math.floor(tokens * 0.75) * CHARS_PER_TOKEN
}

export class ContextCache {
  private readonly settled = new Map<string, Settled>()

  constructor(private readonly store: Store) {}

  /**
   * The model messages for a step of `row`'s session. Messages of `activeTurnId` (and any still
   * streaming) are read fresh every time; everything before them is settled once.
   */
  async build(
    row: SessionRow,
    activeTurnId: string | null,
    budget: number,
    known?: readonly SessionMessage[],
  ): Promise<ModelMessage[]> {
    const id = row.session_id
    let s = this.settled.get(id)
    if (!s || s.key !== keyOf(row) || s.budget < budget) s = await this.cold(row, activeTurnId, budget)
    s.budget = budget
    // Most recently used last, so the oldest entry is the one dropped.
    this.settled.delete(id)
    this.settled.set(id, s)
    if (this.settled.size > MAX_SESSIONS) this.settled.delete(this.settled.keys().next().value!)

    const fresh = this.after(row, unsettledFrom(row, s), known)
    const i = this.settlePrefix(s, fresh, activeTurnId)
    trim(s, budget)
    return s.flat.concat(buildModelMessages(fresh.slice(i)))
  }

  /**
   * Settles what a turn that just ended left after the settled part (its messages are final
   * now), so the next prompt's first step finds the context settled up to that prompt and reads
   * nothing before it calls the model (issue 10 item 3: the read was on the way to every reply's
   * first word). A session without a settled context waits for its first step, as before.
   * `known`: the turn's messages as they committed (ActiveTurn.committed), taken as they are if
   * they are all there is after the settled part: a long reply is not parsed back a second time.
   */
  settleEnded(row: SessionRow, known?: readonly SessionMessage[]): void {
    const s = this.settled.get(row.session_id)
    if (!s || s.key !== keyOf(row)) return
    this.settlePrefix(s, this.after(row, unsettledFrom(row, s), known), null)
    trim(s, s.budget)
  }

  /**
   * The messages from seq `from` on: `known` when they are exactly those (the prompt a turn just
   * wrote, or the messages of one that just ended, and nothing after them or between them and
   * the settled part), else read from the store.
   */
  private after(row: SessionRow, from: number, known?: readonly SessionMessage[]): readonly SessionMessage[] {
    if (known && known.length > 0 && from >= row.visible_from_seq) {
      // The session's newest seq now (its cached row): nothing was written after `known`.
      const last = this.store.getSession(row.session_id)?.last_seq
      if (last === from + known.length - 1 && known.every((m, i) => m.seq === from + i)) return known
    }
    return this.store.contextMessages(row.session_id, from)
  }

  /** Settles the finished prefix of `fresh` (up to a streaming message or the running turn's); returns its length. */
  private settlePrefix(s: Settled, fresh: readonly SessionMessage[], activeTurnId: string | null): number {
    let i = 0
    for (; i < fresh.length; i++) {
      const m = fresh[i]
      if (m.status === 'streaming' || (activeTurnId !== null && m.turn_id === activeTurnId)) break
      this.settle(s, m)
    }
    return i
  }

  /** A fork starts from its parent's settled context, up to the fork point. */
  inherit(parent_id: string, child: SessionRow): void {
    const p = this.settled.get(parent_id)
    if (!p || p.key !== keyOf(child)) return
    const entries = p.entries.filter((e) => e.seq <= child.fork_seq)
    this.settled.set(child.session_id, {
      key: p.key,
      upto: Math.min(p.upto, child.fork_seq),
      budget: p.budget,
      entries,
      flat: entries.flatMap((e) => e.messages),
      chars: entries.reduce((n, e) => n + e.chars, 0),
    })
  }

  forget(session_id: string): void {
    this.settled.delete(session_id)
  }

  private settle(s: Settled, m: SessionMessage): void {
    s.upto = m.seq
    const messages = buildModelMessages([m])
    if (messages.length === 0) return
    const chars = messageChars(m)
    s.entries.push({ seq: m.seq, chars, messages })
    for (const mm of messages) s.flat.push(mm)
    s.chars += chars
  }

  /**
   * No settled context yet (first step since start, or the history was cleared or compacted):
   * read newest first until the window is full or the context floor is reached. Everything read
   * is settled except the newest run of unfinished messages, which build() reads fresh. A page
   * at a time, and settled SETTLE_RUN messages at a time, each in a turn of the event loop of its
   * own (a chat that fits in one page is read at once). Meanwhile nothing else writes to this
   * session: its turn is the one waiting for this.
   */
  private async cold(row: SessionRow, activeTurnId: string | null, budget: number): Promise<Settled> {
    const floor = row.context_from_seq
    const newestFirst: SessionMessage[] = []
    let chars = 0
    let before: number | undefined
    let full = false
    read: for (;;) {
      const page = this.store.listMessages(row.session_id, { before_seq: before, limit: PAGE })
      for (const m of page) {
        if (m.seq < floor) break read
        newestFirst.push(m)
        chars += messageChars(m)
        if (chars > budget) {
          full = true
          break read
        }
      }
      if (page.length < PAGE) break
      before = page[page.length - 1].seq
      await nextTurn()
    }
    // The running turn's messages (and any unfinished ones) at the end stay out of the settled
    // part: build() reads them fresh on every step.
    const unsettled = (m: SessionMessage) =>
      m.status === 'streaming' || (activeTurnId !== null && m.turn_id === activeTurnId)
    let end = 0
    while (end < newestFirst.length && unsettled(newestFirst[end])) end++
    const s: Settled = { key: keyOf(row), upto: floor - 1, budget, entries: [], flat: [], chars: 0 }
    const oldest = newestFirst.length - 1
    // Below the oldest message read, nothing is left out that the context needs: settled. Also
    // when every message read is the running turn's if the read reached the floor (a new
    // chat's first prompt: its messages then follow the settled part exactly), but not if the
    // window filled inside the running turn: build() reads that turn whole, its prompt first.
    if (oldest >= end || (oldest >= 0 && !full)) s.upto = newestFirst[oldest].seq - 1
    for (let k = oldest, run = 0; k >= end; k--) {
      if (++run > SETTLE_RUN) {
        run = 1
        await nextTurn()
      }
      this.settle(s, newestFirst[k])
    }
    return s
  }
}

/**
 * Keeps the settled context within the window: the oldest messages leave first, and the
 * context starts at a user message (providers refuse a conversation that starts otherwise).
 */
function trim(s: Settled, budget: number): void {
  if (s.chars <= budget) return
  let drop = 0
  let chars = s.chars
  while (drop < s.entries.length && chars > budget) chars -= s.entries[drop++].chars
  while (drop < s.entries.length && s.entries[drop].messages[0]?.role !== 'user')
    chars -= s.entries[drop++].chars
  s.entries = s.entries.slice(drop)
  s.flat = s.entries.flatMap((e) => e.messages)
  s.chars = chars
}
