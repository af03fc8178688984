import { describe, expect, it } from 'vitest'
import { createArbor } from '../../src-shared/sdk'
import type { MessagesPage, SessionMutation } from '../../src-shared/types'
import { initialChat, type ChatState } from '../../src-renderer/state/chat'
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
      ],
      { query: '?raw', import: 'default', eager: true },
    ) as Record<string, string>
    expect(Object.keys(sources)).toHaveLength(5)
    for (const source of Object.values(sources)) expect(source).not.toMatch(/from '(react|zustand)[^']*'/)
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
