import Database from 'better-sqlite3'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Session } from '../../src-main/runtime'
import type { MessagesPage, SessionMessage } from '../../src-shared/types'
import { sqliteRuntime, tempDir, writeMessages } from './helpers'

/**
 * Pages across a fork lineage read the ancestors' newest rows from a cache (they never change
 * below a fork point). Every page, with every cursor, must be what walking the lineage gives.
 */
describe('pages across deep fork chains', () => {
  it('match the lineage walked message by message, at every cursor, for chains of every shape', async () => {
    const dataDir = tempDir()
    const rt = sqliteRuntime({ dataDir })
    const say = (s: Session, n: number, tag: string) =>
      writeMessages(rt, s.session_id, n, tag, (i) => `${tag} ${i}`)
    // Two messages per fork, forks from the middle of their parent, and one long ancestor
    // (longer than the cached rows), so pages cross cached and uncached segments.
    const root = await rt.sessions.create()
    say(root, 150, 'root')
    let tip = root
    const chain: Session[] = [root]
    for (let d = 0; d < 12; d++) {
      const page = await tip.messages({ limit: 3 })
      tip = d % 3 === 0 ? await tip.fork({ message_id: page.items[0]!.message_id }) : await tip.fork()
      say(tip, d % 4 === 0 ? 70 : 2, `f${d}`)
      chain.push(tip)
    }

    /** The reference, read raw: each segment of the lineage (parent up to the fork point), by seq. */
    const db = new Database(join(dataDir, 'arbor.db'), { readonly: true })
    const sessionRow = db.prepare('SELECT * FROM sessions WHERE session_id = ?')
    const rowsIn = db.prepare(
      'SELECT seq, message_id FROM messages WHERE session_id = ? AND seq > ? AND seq <= ?',
    )
    const expected = (s: Session): string[] => {
      type R = { fork_seq: number; parent_session_id: string | null; visible_from_seq: number }
      const floor = (sessionRow.get(s.session_id) as R).visible_from_seq - 1
      const all: Array<{ seq: number; message_id: string }> = []
      let hi = Number.MAX_SAFE_INTEGER
      let id: string | null = s.session_id
      while (id) {
        const r = sessionRow.get(id) as R
        all.push(...(rowsIn.all(id, Math.max(r.fork_seq, floor), hi) as typeof all))
        hi = Math.min(hi, r.fork_seq)
        id = r.parent_session_id
      }
      return all.sort((a, b) => a.seq - b.seq).map((m) => m.message_id)
    }
    const paged = async (s: Session, limit: number): Promise<string[]> => {
      const ids: string[] = []
      let cursor: string | null = null
      do {
        const page: { items: SessionMessage[]; next_cursor: string | null } = await s.messages({
          cursor,
          limit,
        })
        ids.unshift(...page.items.map((m) => m.message_id))
        cursor = page.next_cursor
      } while (cursor)
      return ids
    }
    /** Read forward (an export's readMessages and messageSeqs), from `after` to the end. */
    const forward = (s: Session, limit: number, after = 0) => {
      const ids: string[] = []
      const seqs: number[] = []
      const upto = rt.store.getSession(s.session_id)!.last_seq
      for (let from = after; ;) {
        const page = rt.store.readMessages(s.session_id, { after_seq: from, upto_seq: upto, limit })
        const pageSeqs = rt.store.messageSeqs(s.session_id, { after_seq: from, upto_seq: upto, limit })
        expect(pageSeqs).toEqual(page.map((m) => m.seq))
        ids.push(...page.map((m) => m.message_id))
        seqs.push(...pageSeqs)
        if (page.length < limit) return { ids, seqs }
        from = page.at(-1)!.seq
      }
    }
    for (const s of chain) {
      const want = expected(s)
      expect(want.length).toBe((await s.get_info()).message_count)
      for (const limit of [2, 7, 50, 200]) {
        expect(await paged(s, limit)).toEqual(want)
        expect(forward(s, limit).ids).toEqual(want)
      }
      // Around a message (a search hit), then `after` to the newest and `cursor` to the oldest:
      // the same lineage, with the message in the first page, centred where both sides allow.
      for (const at of [0, 1, Math.floor(want.length / 2), want.length - 2, want.length - 1]) {
        for (const limit of [1, 2, 7, 50]) {
          const page = await s.messages({ around: want[at]!, limit })
          const ids = page.items.map((m) => m.message_id)
          expect(ids.length).toBe(Math.min(limit, want.length))
          const i = ids.indexOf(want[at]!)
          expect(i).toBeGreaterThanOrEqual(0)
          const newer = Math.min(want.length - 1 - at, Math.floor(limit / 2))
          expect(i).toBe(Math.min(at, limit - 1 - newer))
          for (let c = page.newer_cursor; c;) {
            const next: MessagesPage = await s.messages({ after: c, limit })
            expect(next.items.length).toBeGreaterThan(0)
            ids.push(...next.items.map((m) => m.message_id))
            c = next.newer_cursor ?? null
          }
          for (let c = page.next_cursor; c;) {
            const next: MessagesPage = await s.messages({ cursor: c, limit })
            ids.unshift(...next.items.map((m) => m.message_id))
            c = next.next_cursor
          }
          expect(ids).toEqual(want)
        }
      }
      // From the middle of the lineage, and below its end: the rows between, in order.
      const all = forward(s, 1_000)
      expect(all.ids).toEqual(want)
      const mid = all.seqs[Math.floor(all.seqs.length / 2)]!
      const upto = all.seqs.at(-2)!
      const part = rt.store.readMessages(s.session_id, { after_seq: mid, upto_seq: upto, limit: 1_000 })
      expect(part.map((m) => m.message_id)).toEqual(
        all.ids.filter((_, i) => all.seqs[i]! > mid && all.seqs[i]! <= upto),
      )
    }

    // A parent's message changed (as only its running turn does): its forks see the change.
    const parent = chain[5]!
    const first = (await parent.messages({ limit: 1 })).items[0]!
    rt.store.updateMessage({
      ...first,
      revision: first.revision + 1,
      parts: [{ type: 'text', part_id: 'prt_changed', text: 'changed' }],
    })
    const child = chain[6]!
    const seen = (await child.messages({ limit: 10 })).items.find((m) => m.message_id === first.message_id)
    // The child forked at the parent's end, so it inherits that message, now changed.
    expect(seen?.parts).toEqual([{ type: 'text', part_id: 'prt_changed', text: 'changed' }])
    db.close()
    await rt.close()
  })

  it('refuse a page around a message the session does not show, and two positions at once', async () => {
    const rt = sqliteRuntime({ dataDir: tempDir() })
    const root = await rt.sessions.create()
    writeMessages(rt, root.session_id, 6, 'root', (i) => `root ${i}`)
    const [a, b] = [await root.fork(), await root.fork()]
    writeMessages(rt, a.session_id, 2, 'a', (i) => `a ${i}`)
    writeMessages(rt, b.session_id, 2, 'b', (i) => `b ${i}`)
    const own = (await a.messages({ limit: 1 })).items[0]!
    // A sibling's message, at the same seq as b's own: not b's.
    await expect(b.messages({ around: own.message_id })).rejects.toMatchObject({ code: 'not_found' })
    await expect(root.messages({ around: own.message_id })).rejects.toMatchObject({ code: 'not_found' })
    await expect(a.messages({ around: 'msg_none' })).rejects.toMatchObject({ code: 'not_found' })
    // The parent's messages are the fork's too.
    const inherited = (await root.messages({ limit: 1 })).items[0]!
    expect(
      (await a.messages({ around: inherited.message_id, limit: 3 })).items.map((m) => m.message_id),
    ).toContain(inherited.message_id)
    await expect(a.messages({ around: own.message_id, cursor: '3' })).rejects.toMatchObject({
      code: 'invalid_request',
    })
    await expect(a.messages({ after: 'x' })).rejects.toMatchObject({ code: 'invalid_request' })
    // The parent's messages past the fork point are not the fork's.
    writeMessages(rt, root.session_id, 1, 'later', () => 'root later')
    const later = (await root.messages({ limit: 1 })).items[0]!
    await expect(a.messages({ around: later.message_id })).rejects.toMatchObject({ code: 'not_found' })
    // Cleared messages are not shown, so not found either; what is written after them is.
    await rt.sessions.clear_messages(a.session_id)
    await expect(a.messages({ around: own.message_id })).rejects.toMatchObject({ code: 'not_found' })
    expect(await a.messages({ after: '0' })).toEqual({ items: [], next_cursor: null, newer_cursor: null })
    writeMessages(rt, a.session_id, 3, 'again', (i) => `again ${i}`)
    const again = (await a.messages({ limit: 3 })).items.map((m) => m.message_id)
    const around = await a.messages({ around: again[1]!, limit: 3 })
    expect(around).toMatchObject({ next_cursor: null, newer_cursor: null })
    expect(around.items.map((m) => m.message_id)).toEqual(again)
    const first = await a.messages({ after: '0', limit: 2 })
    expect(first.items.map((m) => m.message_id)).toEqual(again.slice(0, 2))
    expect(first.next_cursor).toBeNull()
    await rt.close()
  })
})
