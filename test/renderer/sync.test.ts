import { describe, expect, it } from 'vitest'
import { createArbor } from '../../src-shared/sdk'
import type { MessagesPage, SessionMutation } from '../../src-shared/types'
import { initialChat, type ChatState } from '../../src-renderer/state/chat'
import { paceFrames, SPLIT_CHARS } from '../../src-renderer/state/pace'
import { createSessionSync } from '../../src-renderer/state/sync'
import { FakeHost, settle } from './fakeHost'
import { SID, delta, firstText, info, messageMut, msg, text } from './fixtures'

/** The engine on its own, over a plain variable instead of a store. */
function setup() {
  const host = new FakeHost()
    .on('session.subscribe', () => ({ subscribed: true }))
    .on('session.unsubscribe', () => ({ subscribed: false }))
    .on('session.messages', () => ({ items: [], next_cursor: null }))
    .on('session.interactions', () => [])
    .on('session.get_info', ({ session_id }) => info(session_id))
  const arbor = createArbor(host)
  let chat: ChatState = { ...initialChat, sessions: [info(SID), info('ses_2')] }
  const frames: Array<() => void> = []
  const reports: string[] = []
  const sync = createSessionSync({
    session: (id) => arbor.session(id),
    read: () => chat,
    write: (next) => (chat = next),
    report: (what) => reports.push(what),
    schedule: (run) => frames.push(run),
    setTimer: (fn) => frames.push(fn),
  })
  const frame = () => frames.splice(0).forEach((run) => run())
  const emit = (mutation: SessionMutation) => host.emit({ type: 'mutation', mutation })
  return { host, sync, chat: () => chat, frame, emit, reports }
}

describe('session sync engine', () => {
  it('is framework-free: no React or zustand in the engine and its pure transitions', () => {
    const sources = import.meta.glob(
      [
        '../../src-renderer/state/sync.ts',
        '../../src-renderer/state/chat.ts',
        '../../src-renderer/state/transcript.ts',
        '../../src-shared/delta.ts',
        '../../src-renderer/state/batch.ts',
        '../../src-renderer/state/pace.ts',
      ],
      { query: '?raw', import: 'default', eager: true },
    ) as Record<string, string>
    expect(Object.keys(sources)).toHaveLength(6)
    for (const source of Object.values(sources)) expect(source).not.toMatch(/from '(react|zustand)[^']*'/)
  })

  it('shows all the streamed text that arrived by the next frame, however much, in order', async () => {
    const { sync, chat, frame, emit } = setup()
    await sync.open(SID)
    emit(messageMut(msg('m1', 1, { revision: 1, status: 'streaming', parts: [text('p', '')] })))
    frame()
    // 300,000 characters arrive before the next frame (a stream far faster than the frames).
    const chunks = ['a', 'b', 'c'].map((c) => c.repeat(100_000))
    const all = chunks.join('')
    chunks.forEach((chunk, i) => emit(delta('m1', 'p', i * chunk.length, chunk)))
    const shown = () => firstText(chat().transcript?.messages.at(0))
    const status = () => chat().transcript?.messages.at(0)?.status
    expect(shown()).toBe('')
    frame()
    expect(shown()).toBe(all)
    expect(status()).toBe('streaming')
    // Then the message settles.
    emit(messageMut(msg('m1', 1, { revision: 2, status: 'complete', parts: [text('p', all)] })))
    frame()
    expect(status()).toBe('complete')
    expect(shown()).toBe(all)
  })

  it('flush() (before an answer is applied) applies every waiting mutation at once', async () => {
    const { sync, chat, frame, emit } = setup()
    await sync.open(SID)
    emit(messageMut(msg('m1', 1, { revision: 1, status: 'streaming', parts: [text('p', '')] })))
    frame()
    const long = 'x'.repeat(3 * SPLIT_CHARS)
    emit(delta('m1', 'p', 0, long))
    emit(messageMut(msg('m1', 1, { revision: 2, status: 'complete', parts: [text('p', long)] })))
    expect(firstText(chat().transcript?.messages.at(0))).toBe('')
    // The reply's end too, which a frame would have left for the next one.
    sync.flush()
    expect(firstText(chat().transcript?.messages.at(0))).toBe(long)
    expect(chat().transcript?.messages.at(0)?.status).toBe('complete')
  })

  it("shows a finished reply's last words in one frame and its end in the next", () => {
    const pace = paceFrames
    const behind = [
      delta('m1', 'p', 0, 'x'.repeat(SPLIT_CHARS)),
      delta('m2', 'q', 0, 'other'),
      delta('m1', 'p', SPLIT_CHARS, 'yy'),
    ]
    const done = messageMut(msg('m1', 1, { revision: 3, parts: [text('p', `${'x'.repeat(SPLIT_CHARS)}yy`)] }))
    const idle = messageMut(msg('m3', 3))
    // A streaming snapshot ends nothing: everything goes now.
    const streaming = messageMut(msg('m1', 1, { status: 'streaming', parts: [text('p', 'x')] }))
    expect(pace([...behind, streaming])).toEqual({ now: [...behind, streaming], later: [] })
    // The finished one: everything before it now; it and what follows next.
    const first = pace([...behind, done, idle])
    expect(first).toEqual({ now: behind, later: [done, idle] })
    expect(pace(first.later)).toEqual({ now: [done, idle], later: [] })
    // A finished snapshot with none of its deltas before it goes with everything else.
    expect(pace([done, ...behind])).toEqual({ now: [done, ...behind], later: [] })
    // A short reply and its end share a frame (two would cost two renders for a few words).
    const short = [delta('m1', 'p', 0, 'x'.repeat(200)), delta('m2', 'q', 0, 'other')]
    expect(pace([...short, done, idle])).toEqual({ now: [...short, done, idle], later: [] })
  })

  it('shows a finished reply whole, then ends it in the next frame', async () => {
    const { sync, chat, frame, emit } = setup()
    await sync.open(SID)
    const open = msg('m2', 2, { revision: 1, status: 'streaming', parts: [text('p', '')] })
    emit(messageMut(open))
    frame()
    const words = 'word '.repeat(SPLIT_CHARS)
    for (let i = 0; i < 2; i++) emit(delta('m2', 'p', i * words.length, words))
    emit(messageMut({ ...open, revision: 2, status: 'complete', parts: [text('p', words.repeat(2))] }))
    frame()
    let m = chat().transcript?.messages.get('m2')
    expect(firstText(m)).toBe(words.repeat(2))
    expect(m?.status).toBe('streaming')
    frame()
    m = chat().transcript?.messages.get('m2')
    expect(m?.status).toBe('complete')
    expect(firstText(m)).toBe(words.repeat(2))
  })

  it('subscribes before it reads, and merges a late page under the live mutations', async () => {
    const { host, sync, chat, emit } = setup()
    let answer: (page: MessagesPage) => void = () => {}
    host.on('session.messages', () => new Promise<MessagesPage>((resolve) => (answer = resolve)))
    const opening = sync.open(SID)
    expect(chat().transcript?.session_id).toBe(SID)
    expect(host.methods()).toEqual([
      'session.subscribe',
      'session.messages',
      'session.interactions',
      'session.get_info',
    ])
    // Live while the page is on its way: a newer revision, then a streamed word.
    emit(messageMut(msg('m2', 2, { revision: 3, status: 'streaming', parts: [text('p', 'Hello')] })))
    emit(delta('m2', 'p', 5, ' there'))
    answer({
      items: [msg('m2', 2, { revision: 2, parts: [text('p', 'He')] }), msg('m1', 1, { role: 'user' })],
      next_cursor: null,
    })
    await opening
    const t = chat().transcript
    expect(t?.loaded).toBe(true)
    expect(t?.messages.toArray().map((m) => m.message_id)).toEqual(['m1', 'm2'])
    expect(firstText(t?.messages.at(1))).toBe('Hello there')
  })

  it('leaving a session unsubscribes it; its late mutations never reach the next one', async () => {
    const { host, sync, chat, frame, emit } = setup()
    await sync.open(SID)
    host.clearCalls()
    await sync.open('ses_2')
    expect(host.calls[0]).toEqual({ method: 'session.unsubscribe', params: { session_id: SID } })
    emit(messageMut(msg('m1', 1)))
    frame()
    expect(chat().transcript?.session_id).toBe('ses_2')
    expect(chat().transcript?.messages.toArray()).toEqual([])
  })

  it('after a reconnect the SDK re-subscribes; resync reloads the page and the interactions', async () => {
    const { host, sync, chat } = setup()
    await sync.open(SID)
    host.on('session.messages', () => ({ items: [msg('m1', 1)], next_cursor: null }))
    host.setConnected(false)
    host.clearCalls()
    host.setConnected(true)
    await sync.resync()
    await settle()
    const methods = host.methods()
    expect(methods[0]).toBe('session.subscribe')
    expect(methods.filter((m) => m === 'session.interactions')).toHaveLength(1)
    expect(
      chat()
        .transcript?.messages.toArray()
        .map((m) => m.message_id),
    ).toEqual(['m1'])
  })

  it('drops a session that answers not_found, and reports other failures', async () => {
    const { host, sync, chat, reports } = setup()
    host.on('session.messages', () => {
      throw Object.assign(new Error('gone'), { code: 'not_found' })
    })
    await sync.open(SID)
    expect(chat().transcript).toBeNull()
    expect(chat().sessions.map((s) => s.session_id)).toEqual(['ses_2'])
    expect(reports).toEqual([])
    host.on('session.messages', () => {
      throw Object.assign(new Error('disk full'), { code: 'internal' })
    })
    await sync.open('ses_2')
    expect(reports).toEqual(['Could not load the conversation'])
  })
})
