import { describe, expect, it } from 'vitest'
import type { SessionMutation } from '../../src-shared/types'
import { applyMutation, applyMutations, initialChat, type ChatState } from '../../src-renderer/state/chat'
import { addedSince } from '../../src-renderer/state/growth'
import {
  dropHeld,
  emptyTranscript,
  loadInteractions,
  loadPage,
  pendingInteractions,
  staleMessageIds,
  type Transcript,
} from '../../src-renderer/state/transcript'
import { SID, approval, delta, firstText, messageMut, msg, partMut, text, toolCall } from './fixtures'

function open(t: Transcript = emptyTranscript(SID)): ChatState {
  return { ...initialChat, transcript: t }
}

function run(state: ChatState, ...mutations: SessionMutation[]): Transcript {
  const next = applyMutations(state, mutations)
  if (!next.transcript) throw new Error('transcript closed')
  return next.transcript
}

const ids = (t: Transcript) => t.messages.toArray().map((m) => m.message_id)

describe('message mutations', () => {
  it('inserts new messages sorted by seq, whatever the arrival order', () => {
    const t = run(open(), messageMut(msg('m3', 3)), messageMut(msg('m1', 1)), messageMut(msg('m2', 2)))
    expect(ids(t)).toEqual(['m1', 'm2', 'm3'])
  })

  it('replaces a message when the revision is newer or equal', () => {
    const a = msg('m1', 1, { revision: 1, parts: [text('p', 'old')] })
    const b = msg('m1', 1, { revision: 2, parts: [text('p', 'new')] })
    const c = msg('m1', 1, { revision: 2, parts: [text('p', 'same revision, later copy')] })
    let t = run(open(), messageMut(a), messageMut(b))
    expect(firstText(t.messages.at(0))).toBe('new')
    t = run(open(t), messageMut(c))
    expect(firstText(t.messages.at(0))).toBe('same revision, later copy')
    expect(t.messages).toHaveLength(1)
  })

  it('ignores a stale revision', () => {
    const newer = msg('m1', 1, { revision: 5, parts: [text('p', 'newer')] })
    const older = msg('m1', 1, { revision: 4, parts: [text('p', 'older')] })
    const t = run(open(), messageMut(newer), messageMut(older))
    expect(firstText(t.messages.at(0))).toBe('newer')
    expect(t.messages.at(0)?.revision).toBe(5)
  })

  it('ignores mutations of another session and keeps the same state object', () => {
    const state = open()
    const next = applyMutation(state, messageMut(msg('m1', 1), 'ses_other'))
    expect(next).toBe(state)
  })

  it('leaves unchanged messages identical (memoised rendering relies on it)', () => {
    const t1 = run(open(), messageMut(msg('m1', 1)), messageMut(msg('m2', 2, { status: 'streaming' })))
    const t2 = run(open(t1), delta('m2', 'm2_p1', 0, 'hi'))
    expect(t2.messages.at(0)).toBe(t1.messages.at(0))
    expect(t2.messages.at(1)).not.toBe(t1.messages.at(1))
  })
})

describe('part mutations', () => {
  const base = () => run(open(), messageMut(msg('m1', 1, { revision: 2, parts: [text('p1', 'hello')] })))

  it('inserts a missing part and bumps the revision', () => {
    const t = run(open(base()), partMut('m1', 3, toolCall('p2', { status: 'running' })))
    expect(t.messages.at(0)?.parts.map((p) => p.part_id)).toEqual(['p1', 'p2'])
    expect(t.messages.at(0)?.revision).toBe(3)
  })

  it('replaces a part by part_id when the revision is not older', () => {
    let t = run(open(base()), partMut('m1', 3, toolCall('p2', { status: 'running' })))
    t = run(open(t), partMut('m1', 3, toolCall('p2', { status: 'done', output: 'ok' })))
    const part = t.messages.at(0)?.parts[1]
    expect(part?.type === 'tool_call' && part.status).toBe('done')
  })

  it('ignores a part older than the message', () => {
    const t = run(open(base()), partMut('m1', 1, text('p1', 'ancient')))
    expect(firstText(t.messages.at(0))).toBe('hello')
  })

  it('records a pending interaction, and forgets it once resolved', () => {
    let t = run(open(base()), partMut('m1', 3, approval('p3')))
    expect(pendingInteractions(t).map((e) => e.part.interaction_id)).toEqual(['int_p3'])
    t = run(open(t), partMut('m1', 4, approval('p3', { status: 'approved', remember: 'once' })))
    expect(pendingInteractions(t)).toEqual([])
    expect(t.interactions.int_p3.part.status).toBe('approved')
  })

  it('records a pending interaction even before its message is known', () => {
    const t = run(open(), partMut('m9', 1, approval('p1')))
    expect(pendingInteractions(t)).toHaveLength(1)
    expect(pendingInteractions(t)[0].message_id).toBe('m9')
  })
})

describe('delta mutations', () => {
  const streaming = () =>
    run(
      open(),
      messageMut(
        msg('m1', 1, { status: 'streaming', parts: [text('t1', ''), toolCall('c1', { input_text: '' })] }),
      ),
    )

  it('appends text at the current length', () => {
    const t = run(open(streaming()), delta('m1', 't1', 0, 'Hel'), delta('m1', 't1', 3, 'lo'))
    expect(firstText(t.messages.at(0))).toBe('Hello')
    expect(staleMessageIds(t)).toEqual([])
  })

  it('remembers what each delta added, so a view reads only the new text (state/growth.ts)', () => {
    const t0 = run(open(streaming()), delta('m1', 't1', 0, 'Hello'))
    const t1 = run(open(t0), delta('m1', 't1', 5, ' wor'))
    // An overlapping delta adds only its tail; one in a later frame follows on.
    const t2 = run(open(t1), delta('m1', 't1', 7, 'orld'), delta('m1', 't1', 11, '!'))
    const part = (t: Transcript) => t.messages.at(0)!.parts[0]!
    const textOf = (t: Transcript) => firstText(t.messages.at(0))!
    expect(addedSince(part(t2), textOf(t1))).toBe('ld!')
    expect(addedSince(part(t2), textOf(t0))).toBe(' world!')
    expect(addedSince(part(t1), textOf(t0))).toBe(' wor')
    // A text it never was (a snapshot's, or another part's): unknown, read whole.
    expect(addedSince(part(t2), 'Hello there')).toBeUndefined()
    expect(addedSince(part(t0), 'Hello')).toBeUndefined()
    // Once the message is final, its deltas are let go (a view may still hold the streamed copy).
    const done = msg('m1', 1, { status: 'complete', revision: 2, parts: [text('t1', 'Hello world!')] })
    run(open(t2), messageMut(done))
    expect(addedSince(part(t2), textOf(t1))).toBeUndefined()
  })

  it("appends to a tool call's input_text for field 'input'", () => {
    const t = run(
      open(streaming()),
      delta('m1', 'c1', 0, '{"path":', 'input'),
      delta('m1', 'c1', 8, '"a"}', 'input'),
    )
    const call = t.messages.at(0)?.parts[1]
    expect(call?.type === 'tool_call' && call.input_text).toBe('{"path":"a"}')
  })

  it('appends only the non-overlapping tail of an overlapping delta', () => {
    let t = run(open(streaming()), delta('m1', 't1', 0, 'Hello wor'))
    t = run(open(t), delta('m1', 't1', 6, 'world!'))
    expect(firstText(t.messages.at(0))).toBe('Hello world!')
  })

  it('drops a delta that is entirely behind us', () => {
    const t1 = run(open(streaming()), delta('m1', 't1', 0, 'Hello'))
    const t2 = run(open(t1), delta('m1', 't1', 1, 'ell'))
    expect(t2).toBe(t1)
  })

  it('holds a delta that starts past our text and marks the message stale', () => {
    const t = run(open(streaming()), delta('m1', 't1', 0, 'Hi'), delta('m1', 't1', 5, 'there'))
    expect(firstText(t.messages.at(0))).toBe('Hi')
    expect(staleMessageIds(t)).toEqual(['m1'])
  })

  it('holds deltas for an unknown message or part, or the wrong field', () => {
    const t = run(
      open(streaming()),
      delta('nope', 'x', 0, 'a'),
      delta('m1', 'missing', 0, 'b'),
      delta('m1', 't1', 0, 'c', 'input'),
    )
    expect(staleMessageIds(t).sort()).toEqual(['m1', 'nope'])
    expect(firstText(t.messages.at(0))).toBe('')
  })

  it('replays held deltas once a snapshot fills the gap', () => {
    let t = run(
      open(streaming()),
      delta('m1', 't1', 0, 'Hi'),
      delta('m1', 't1', 4, 'there'),
      delta('m1', 't1', 9, '!'),
    )
    expect(staleMessageIds(t)).toEqual(['m1'])
    // The persisted copy (same revision) holds "Hi, t": the held deltas now fit (with overlap).
    t = loadPage(t, {
      items: [msg('m1', 1, { status: 'streaming', parts: [text('t1', 'Hi, t')] })],
      next_cursor: null,
    })
    expect(firstText(t.messages.at(0))).toBe('Hi, there!')
    expect(staleMessageIds(t)).toEqual([])
  })

  it('drops held deltas when the message completes', () => {
    let t = run(open(streaming()), delta('m1', 't1', 50, 'late'))
    t = run(
      open(t),
      messageMut(msg('m1', 1, { revision: 2, status: 'complete', parts: [text('t1', 'Final.')] })),
    )
    expect(firstText(t.messages.at(0))).toBe('Final.')
    expect(staleMessageIds(t)).toEqual([])
  })

  it('dropHeld forgets the held deltas of the given messages', () => {
    const t = run(open(streaming()), delta('m1', 't1', 9, 'x'), delta('m2', 'p', 0, 'y'))
    expect(staleMessageIds(dropHeld(t, ['m2']))).toEqual(['m1'])
  })
})

describe('session mutations', () => {
  it('updates the open session info and the list', async () => {
    const { info } = await import('./fixtures')
    const state: ChatState = { sessions: [info(SID)], transcript: emptyTranscript(SID, info(SID)) }
    const next = applyMutation(state, {
      variant: 'session',
      session_id: SID,
      info: info(SID, { state: 'running', title: 'Renamed' }),
    })
    expect(next.sessions[0].title).toBe('Renamed')
    expect(next.transcript?.info?.state).toBe('running')
  })

  it('drops a removed session and closes it when open', async () => {
    const { info } = await import('./fixtures')
    const state: ChatState = { sessions: [info(SID), info('ses_2')], transcript: emptyTranscript(SID) }
    const next = applyMutation(state, { variant: 'session', session_id: SID, info: null, removed: true })
    expect(next.sessions.map((s) => s.session_id)).toEqual(['ses_2'])
    expect(next.transcript).toBeNull()
  })
})

describe('loadPage', () => {
  it('puts an older page in front and interleaves a page that overlaps what is loaded', () => {
    let t = loadPage(emptyTranscript(SID), { items: [msg('m5', 5), msg('m7', 7)], next_cursor: 'c' })
    t = loadPage(t, { items: [msg('m2', 2), msg('m1', 1)], next_cursor: 'c2' }, { older: true })
    expect(ids(t)).toEqual(['m1', 'm2', 'm5', 'm7'])
    expect(t.older_cursor).toBe('c2')
    // Known ones are replaced by their newer revision in place, new ones land in seq order.
    t = loadPage(t, {
      items: [msg('m8', 8), msg('m5', 5, { revision: 3, parts: [text('p', 'edited')] }), msg('m6', 6)],
      next_cursor: 'c3',
    })
    expect(ids(t)).toEqual(['m1', 'm2', 'm5', 'm6', 'm7', 'm8'])
    expect(firstText(t.messages.at(2))).toBe('edited')
    expect(t.older_cursor).toBe('c2') // the latest page moves the cursor only the first time
  })

  it('merges a newest-first page into a sorted transcript without duplicates', () => {
    let t = run(open(), messageMut(msg('m3', 3, { revision: 2, parts: [text('p', 'live')] })))
    t = loadPage(t, {
      items: [
        msg('m3', 3, { revision: 1, parts: [text('p', 'persisted (older)')] }),
        msg('m2', 2),
        msg('m1', 1),
      ],
      next_cursor: 'c1',
    })
    expect(ids(t)).toEqual(['m1', 'm2', 'm3'])
    expect(firstText(t.messages.at(2))).toBe('live')
    expect(t.loaded).toBe(true)
    expect(t.older_cursor).toBe('c1')
  })

  it('is idempotent: loading the same page twice changes nothing', () => {
    const page = { items: [msg('m2', 2), msg('m1', 1)], next_cursor: null }
    const once = loadPage(emptyTranscript(SID), page)
    const twice = loadPage(once, page)
    expect(twice.messages.toArray()).toEqual(once.messages.toArray())
  })

  it('keeps streamed text longer than a lagging persisted copy of a streaming message', () => {
    let t = run(
      open(),
      messageMut(msg('m1', 1, { status: 'streaming', parts: [text('p', '')] })),
      delta('m1', 'p', 0, 'Hello world'),
    )
    t = loadPage(t, {
      items: [msg('m1', 1, { status: 'streaming', parts: [text('p', 'Hello')] })],
      next_cursor: null,
    })
    expect(firstText(t.messages.at(0))).toBe('Hello world')
    // ...and the live stream continues from there.
    t = run(open(t), delta('m1', 'p', 11, '!'))
    expect(firstText(t.messages.at(0))).toBe('Hello world!')
  })

  it('takes the persisted text of a finished message', () => {
    let t = run(open(), messageMut(msg('m1', 1, { status: 'streaming', parts: [text('p', 'Hello wor')] })))
    t = loadPage(t, {
      items: [msg('m1', 1, { revision: 2, status: 'cancelled', parts: [text('p', 'Hello')] })],
      next_cursor: null,
    })
    expect(firstText(t.messages.at(0))).toBe('Hello')
    expect(t.messages.at(0)?.status).toBe('cancelled')
  })

  it('moves the older cursor only for older pages after the first load', () => {
    let t = loadPage(emptyTranscript(SID), { items: [msg('m5', 5)], next_cursor: 'c5' })
    t = loadPage(t, { items: [msg('m5', 5)], next_cursor: 'c-refetch' })
    expect(t.older_cursor).toBe('c5')
    t = loadPage(t, { items: [msg('m4', 4)], next_cursor: null }, { older: true })
    expect(t.older_cursor).toBeNull()
    expect(ids(t)).toEqual(['m4', 'm5'])
  })

  it('heals a delta received before the page (subscribe, then load)', () => {
    // Subscribed mid-stream: the first delta names a message we have not loaded yet.
    let t = run(open(), delta('m1', 'p', 5, ' world'))
    expect(staleMessageIds(t)).toEqual(['m1'])
    t = loadPage(t, {
      items: [msg('m1', 1, { status: 'streaming', parts: [text('p', 'Hello')] })],
      next_cursor: null,
    })
    expect(firstText(t.messages.at(0))).toBe('Hello world')
    expect(staleMessageIds(t)).toEqual([])
  })
})

describe('loadInteractions', () => {
  it('treats the list as what is pending now', () => {
    let t = run(
      open(),
      messageMut(msg('m1', 1, { parts: [approval('a'), approval('b', { status: 'denied' })] })),
    )
    expect(pendingInteractions(t).map((e) => e.part.interaction_id)).toEqual(['int_a'])
    t = loadInteractions(t, [
      {
        interaction_id: 'int_c',
        session_id: SID,
        turn_id: 't',
        message_id: 'm2',
        part: approval('c'),
        created_at: 1,
      },
    ])
    expect(pendingInteractions(t).map((e) => e.part.interaction_id)).toEqual(['int_c'])
    expect(t.interactions.int_b.part.status).toBe('denied')
  })
})
