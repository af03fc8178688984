import { describe, expect, it } from 'vitest'
import { createArbor } from '../../src-shared/sdk'
import type { AppInfo } from '../../src-shared/contract'
import type { MessagesOptions, MessagesPage, SessionMessage, SessionMutation } from '../../src-shared/types'
import { createApp } from '../../src-renderer/state/store'
import { staleMessageIds } from '../../src-renderer/state/transcript'
import { FakeHost, settle } from './fakeHost'
import { SID, delta, firstText, info, messageMut, msg, text } from './fixtures'

const APP: AppInfo = {
  version: '0.1.0',
  host: 'browser',
  data_dir: '/tmp/x',
  store: 'memory',
  models: [{ id: 'scripted', label: 'Scripted offline model', offline: true }],
  default_model: 'scripted',
  search_index: { indexed_upto: 0, total: 0, done: true },
}

/** A host with one session (SID) holding `page`, and a manual frame clock. */
function setup(page: MessagesPage = { items: [], next_cursor: null }) {
  const host = new FakeHost()
    .on('app.info', () => APP)
    .on('sessions.list', () => [info(SID)])
    .on('sessions.create', () => info('ses_new', { created_at: 5, updated_at: 5 }))
    .on('session.subscribe', () => ({ subscribed: true }))
    .on('session.unsubscribe', () => ({ subscribed: false }))
    .on('session.messages', () => page)
    .on('session.interactions', () => [])
    .on('session.get_info', ({ session_id }) => info(session_id))
    .on('session.prompt', () => ({ id: 'turn_1', command_id: 'cmd_1' }))
  const frames: Array<() => void> = []
  const opened: Array<string | null> = []
  const app = createApp(createArbor(host), {
    schedule: (run) => frames.push(run),
    setTimer: (fn) => frames.push(fn),
    initialSessionId: SID,
    onOpen: (id) => opened.push(id),
  })
  const frame = () => {
    const pending = frames.splice(0)
    for (const run of pending) run()
  }
  const emit = (mutation: SessionMutation) => host.emit({ type: 'mutation', mutation })
  return { host, app, state: () => app.store.getState(), frame, emit, opened }
}

/** A chat of `n` messages m1…mn, paged as the host does (a cursor is a seq; views.ts). */
function pagedChat(n: number) {
  let chat = Array.from({ length: n }, (_, i) => msg(`m${i + 1}`, i + 1))
  const pager = (p: MessagesOptions): MessagesPage => {
    const limit = p.limit ?? 50
    const cut = (from: number, to: number) => {
      const items = chat.slice(Math.max(0, from), Math.min(chat.length, to))
      return {
        items,
        next_cursor: from > 0 && items.length ? String(items[0]!.seq) : null,
        newer_cursor: to < chat.length && items.length ? String(items.at(-1)!.seq) : null,
      }
    }
    if (p.around) {
      const i = chat.findIndex((m) => m.message_id === p.around)
      if (i < 0)
        throw Object.assign(new Error(`Message ${p.around} is not in this chat.`), { code: 'not_found' })
      const newer = chat.length - 1 - i
      let k = Math.min(newer, Math.floor(limit / 2))
      const o = Math.min(i + 1, limit - k)
      k = Math.min(newer, limit - o)
      return cut(i + 1 - o, i + 1 + k)
    }
    if (p.after) {
      const from = chat.findIndex((m) => m.seq > Number(p.after))
      return cut(from < 0 ? chat.length : from, (from < 0 ? chat.length : from) + limit)
    }
    const to = p.cursor ? chat.findIndex((m) => m.seq >= Number(p.cursor)) : chat.length
    const { items, next_cursor } = cut(to - limit, to)
    return { items, next_cursor }
  }
  return {
    pager,
    all: () => chat,
    set: (messages: SessionMessage[]) => (chat = messages),
    ids: (from: number, to?: number) => chat.slice(from, to).map((m) => m.message_id),
  }
}

describe('app store', () => {
  it('boots: app info, sessions, then subscribes BEFORE reading the open session', async () => {
    const { host, app, state, opened } = setup({
      items: [msg('m1', 1, { parts: [text('p', 'hi')] })],
      next_cursor: null,
    })
    await app.actions.boot()
    expect(host.methods()).toEqual([
      'app.info',
      'sessions.list',
      'settings.get',
      'session.subscribe',
      'session.messages',
      'session.interactions',
      'session.get_info',
    ])
    expect(state().ready).toBe(true)
    expect(state().app?.models[0].label).toBe('Scripted offline model')
    expect(state().transcript?.session_id).toBe(SID)
    expect(firstText(state().transcript?.messages.at(0))).toBe('hi')
    expect(opened).toEqual([SID])
  })

  it('sending without an open chat creates one, subscribes, then prompts', async () => {
    const { host, app, state } = setup()
    host.on('sessions.list', () => [])
    await app.actions.boot()
    host.clearCalls()
    expect(await app.actions.send('  hello  ')).toBe(true)
    const methods = host.methods()
    expect(methods.indexOf('sessions.create')).toBe(0)
    expect(methods.indexOf('session.subscribe')).toBeLessThan(methods.indexOf('session.prompt'))
    expect(host.calls.find((c) => c.method === 'session.prompt')?.params).toEqual({
      session_id: 'ses_new',
      query: 'hello',
    })
    expect(state().transcript?.session_id).toBe('ses_new')
  })

  it('a prompt sent while New chat is still being created goes to the new chat', async () => {
    const { host, app, state } = setup()
    await app.actions.boot()
    let answer: () => void = () => {}
    host.on('sessions.create', () => new Promise((ok) => (answer = () => ok(info('ses_new')))))
    const created = app.actions.newChat()
    const again = app.actions.newChat()
    const sent = app.actions.send('for the new chat')
    await settle()
    expect(host.count('session.prompt')).toBe(0)
    answer()
    expect(await sent).toBe(true)
    expect(await created).toBe('ses_new')
    expect(await again).toBe('ses_new')
    expect(host.count('sessions.create')).toBe(1)
    expect(host.calls.find((c) => c.method === 'session.prompt')?.params).toEqual({
      session_id: 'ses_new',
      query: 'for the new chat',
    })
    expect(state().transcript?.session_id).toBe('ses_new')
  })

  it('applies live mutations once per frame, in order', async () => {
    const { app, state, frame, emit } = setup()
    await app.actions.boot()
    emit(messageMut(msg('m1', 1, { status: 'streaming', parts: [text('p', '')] })))
    emit(delta('m1', 'p', 0, 'Hel'))
    emit(delta('m1', 'p', 3, 'lo'))
    expect(state().transcript?.messages.toArray()).toEqual([])
    frame()
    expect(firstText(state().transcript?.messages.at(0))).toBe('Hello')
  })

  it('a page answered after queued live mutations never rolls them back', async () => {
    const { host, app, state, emit } = setup()
    await app.actions.boot()
    emit(messageMut(msg('m1', 1, { revision: 3, parts: [text('p', 'live')] })))
    // No frame yet; a page (older revision) arrives: the live copy must still win.
    host.on('session.messages', () => ({
      items: [msg('m1', 1, { revision: 2, parts: [text('p', 'old')] })],
      next_cursor: null,
    }))
    host.setConnected(false)
    host.setConnected(true)
    await settle()
    expect(state().transcript?.messages).toHaveLength(1)
    expect(firstText(state().transcript?.messages.at(0))).toBe('live')
  })

  it('after a reconnect re-subscribes, reloads and converges without duplicates', async () => {
    const first = msg('m1', 1, { role: 'user', parts: [text('p', 'q')] })
    const { host, app, state } = setup({ items: [first], next_cursor: null })
    await app.actions.boot()
    host.setConnected(false)
    expect(state().connected).toBe(false)
    const reply = msg('m2', 2, { parts: [text('p', 'answer')] })
    host.on('session.messages', () => ({ items: [reply, first], next_cursor: null }))
    host.clearCalls()
    host.setConnected(true)
    await settle()
    expect(state().connected).toBe(true)
    const methods = host.methods()
    expect(methods).toContain('session.subscribe')
    expect(methods.indexOf('session.subscribe')).toBeLessThan(methods.indexOf('session.messages'))
    expect(
      state()
        .transcript?.messages.toArray()
        .map((m) => m.message_id),
    ).toEqual(['m1', 'm2'])
  })

  it('refetches the latest page when the live stream has a gap', async () => {
    const { host, app, state, frame, emit } = setup({
      items: [msg('m1', 1, { status: 'streaming', parts: [text('p', 'Hello')] })],
      next_cursor: null,
    })
    await app.actions.boot()
    host.on('session.messages', () => ({
      items: [msg('m1', 1, { status: 'streaming', parts: [text('p', 'Hello there, ')] })],
      next_cursor: null,
    }))
    host.clearCalls()
    emit(delta('m1', 'p', 13, 'friend'))
    frame()
    expect(staleMessageIds(state().transcript)).toEqual(['m1'])
    await settle()
    expect(host.methods()).toEqual(['session.messages'])
    expect(firstText(state().transcript?.messages.at(0))).toBe('Hello there, friend')
    expect(staleMessageIds(state().transcript)).toEqual([])
  })

  it('refreshes the list on sessions_changed', async () => {
    const { host, app, state } = setup()
    await app.actions.boot()
    host.on('sessions.list', () => [info(SID), info('ses_2', { updated_at: 9 })])
    host.emit({ type: 'sessions_changed' })
    await settle()
    expect(state().sessions.map((s) => s.session_id)).toEqual(['ses_2', SID])
  })

  it('opens another session when the open one is removed elsewhere', async () => {
    const { host, app, state, frame, emit } = setup()
    host.on('sessions.list', () => [info(SID, { updated_at: 5 }), info('ses_2')])
    await app.actions.boot()
    emit({ variant: 'session', session_id: SID, info: null, removed: true })
    frame()
    await settle()
    expect(state().sessions.map((s) => s.session_id)).toEqual(['ses_2'])
    expect(state().transcript?.session_id).toBe('ses_2')
    expect(host.calls.filter((c) => c.method === 'session.subscribe').at(-1)?.params).toEqual({
      session_id: 'ses_2',
    })
  })

  it('switching sessions unsubscribes the previous one', async () => {
    const { host, app } = setup()
    host.on('sessions.list', () => [info(SID), info('ses_2')])
    await app.actions.boot()
    host.clearCalls()
    await app.actions.openSession('ses_2')
    expect(host.calls[0]).toEqual({ method: 'session.unsubscribe', params: { session_id: SID } })
    expect(host.methods()).toContain('session.subscribe')
  })

  it('reports a refused call as a notice and never as a message', async () => {
    const { host, app, state } = setup()
    await app.actions.boot()
    host.on('session.prompt', () => {
      throw Object.assign(new Error('too long'), { code: 'invalid_request' })
    })
    expect(await app.actions.send('x')).toBe(false)
    expect(state().notice?.text).toBe('Could not send: too long')
    expect(state().transcript?.messages.toArray()).toEqual([])
  })

  it('responds to an interaction with the chosen decision', async () => {
    const { host, app, state } = setup()
    host.on('session.respond', ({ interaction_id }) => ({ interaction_id, status: 'approved' }))
    await app.actions.boot()
    const p = app.actions.respond('int_1', { decision: 'approve', remember: 'always_for_tool' })
    expect(state().responding).toEqual({ int_1: true })
    await p
    expect(state().responding).toEqual({})
    expect(host.calls.at(-1)).toEqual({
      method: 'session.respond',
      params: { session_id: SID, interaction_id: 'int_1', decision: 'approve', remember: 'always_for_tool' },
    })
  })

  it('closes the open session when a list refresh shows it was removed elsewhere', async () => {
    const { host, app, state } = setup()
    host.on('sessions.list', () => [info(SID, { updated_at: 5 }), info('ses_2')])
    await app.actions.boot()
    host.on('sessions.list', () => [info('ses_2')])
    host.on('session.get_info', ({ session_id }) => {
      if (session_id === SID) throw Object.assign(new Error('gone'), { code: 'not_found' })
      return info(session_id)
    })
    host.emit({ type: 'sessions_changed' })
    await settle()
    expect(state().transcript?.session_id).toBe('ses_2')
    expect(state().notice).toBeNull()
  })

  it('loads older pages on demand and merges them in order', async () => {
    const { host, app, state } = setup({ items: [msg('m3', 3), msg('m2', 2)], next_cursor: 'c2' })
    await app.actions.boot()
    expect(state().transcript?.older_cursor).toBe('c2')
    host.on('session.messages', ({ cursor }) => {
      expect(cursor).toBe('c2')
      return { items: [msg('m1', 1)], next_cursor: null }
    })
    await app.actions.loadOlder()
    expect(
      state()
        .transcript?.messages.toArray()
        .map((m) => m.message_id),
    ).toEqual(['m1', 'm2', 'm3'])
    expect(state().transcript?.older_cursor).toBeNull()
    expect(state().loadingOlder).toBe(false)
  })

  it('edit-and-resend forks just before the message, opens the child and prompts there', async () => {
    const { host, app, state } = setup()
    const parent = info(SID, { title: 'Trip', updated_at: 5 })
    const child = info('ses_child', {
      title: 'Trip (fork)',
      updated_at: 6,
      parent: { parent_session_id: SID, fork_seq: 2, snapshot_id: 'snp', fork_message_id: 'm2' },
    })
    host
      .on('sessions.list', () => [parent])
      .on('session.fork', () => child)
      .on('session.get_info', ({ session_id }) => (session_id === SID ? parent : child))
    await app.actions.boot()
    host.clearCalls()
    await app.actions.editAndResend('m3', '  Add a day in Cascais ')
    await settle()
    const fork = host.calls.find((c) => c.method === 'session.fork')?.params as Record<string, unknown>
    expect(fork).toMatchObject({ session_id: SID, message_id: 'm3', before: true })
    expect(String(fork.operation_id)).toMatch(/^op_/)
    expect(state().transcript?.session_id).toBe('ses_child')
    expect(host.calls.find((c) => c.method === 'session.prompt')?.params).toEqual({
      session_id: 'ses_child',
      query: 'Add a day in Cascais',
    })
    // The runtime names the fork after its first new prompt; the client does not rename it.
    expect(host.calls.some((c) => c.method === 'sessions.rename')).toBe(false)
  })

  it('search keeps only the answer for the current text', async () => {
    const { host, app, state } = setup()
    await app.actions.boot()
    let answer: (v: unknown) => void = () => {}
    host.on('sessions.search', ({ query }) =>
      query === 'slow'
        ? new Promise((ok) => (answer = ok)).then(() => [])
        : [
            {
              session_id: SID,
              session_title: 'T',
              match: 'message' as const,
              message_id: 'm1',
              snippet: 'fast hit',
              created_at: 1,
            },
          ],
    )
    app.actions.setQuery('slow')
    const slow = app.actions.search('slow')
    app.actions.setQuery('fast')
    await app.actions.search('fast')
    answer(null)
    await slow
    expect(state().search).toEqual({
      query: 'fast',
      hits: [
        {
          session_id: SID,
          session_title: 'T',
          match: 'message' as const,
          message_id: 'm1',
          snippet: 'fast hit',
          created_at: 1,
        },
      ],
      loading: false,
      limit: 50,
    })
    app.actions.clearSearch()
    expect(state().search.hits).toBeNull()
  })

  it('search asks for the newest 50 matches, and 200 when older ones are asked for', async () => {
    const { host, app, state } = setup()
    await app.actions.boot()
    const asked: Array<{ query: string; limit?: number }> = []
    host.on('sessions.search', (params) => {
      asked.push(params)
      return []
    })
    app.actions.setQuery('apple')
    await app.actions.search('apple')
    await app.actions.searchMore()
    expect(state().search).toMatchObject({ query: 'apple', limit: 200, loading: false })
    // A new text starts again from the newest 50.
    app.actions.setQuery('pear')
    await app.actions.search('pear')
    expect(state().search.limit).toBe(50)
    expect(asked).toEqual([
      { query: 'apple', limit: 50 },
      { query: 'apple', limit: 200 },
      { query: 'pear', limit: 50 },
    ])
  })

  it('opening a search hit far back reads one page around it, then newer pages until the newest, then follows live', async () => {
    const { host, app, state, frame, emit } = setup({
      items: [msg('m9', 9), msg('m10', 10)],
      next_cursor: 'c9',
    })
    await app.actions.boot()
    const pages: Record<string, MessagesPage> = {
      around: { items: [msg('m4', 4), msg('m5', 5), msg('m6', 6)], next_cursor: 'c4', newer_cursor: 'n6' },
      n6: { items: [msg('m7', 7), msg('m8', 8)], next_cursor: 'c7', newer_cursor: 'n8' },
      // m11, published (and dropped) while away, was persisted before: the page holds it.
      n8: {
        items: [msg('m9', 9), msg('m10', 10), msg('m11', 11, { parts: [text('p', 'late')] })],
        next_cursor: 'c9',
        newer_cursor: null,
      },
    }
    host.on('session.messages', ({ around, after }) =>
      around === 'm5' ? pages.around : after ? pages[after as string] : { items: [], next_cursor: null },
    )
    const ids = () =>
      state()
        .transcript?.messages.toArray()
        .map((m) => m.message_id)
    await app.actions.openAt(SID, 'm5')
    // One request for the hit (not a page per 500 messages between it and the newest).
    const asked = host.calls.filter((c) => c.method === 'session.messages').map((c) => c.params)
    expect(asked.at(-1)).toMatchObject({ around: 'm5', limit: 100 })
    expect(ids()).toEqual(['m4', 'm5', 'm6'])
    expect(state().transcript).toMatchObject({ older_cursor: 'c4', newer_cursor: 'n6' })
    expect(state().focus?.message_id).toBe('m5')

    // Away from the newest: a new message is not placed after the window, nor is a delta held
    // (its heal would read the newest page into the window); a message in it still changes.
    emit(messageMut(msg('m11', 11, { status: 'streaming', parts: [text('p', '')] })))
    emit(delta('m11', 'p', 0, 'late'))
    emit(messageMut(msg('m5', 5, { revision: 2, parts: [text('p', 'edited')] })))
    frame()
    expect(ids()).toEqual(['m4', 'm5', 'm6'])
    expect(staleMessageIds(state().transcript)).toEqual([])
    expect(firstText(state().transcript?.messages.get('m5'))).toBe('edited')

    await app.actions.loadNewer()
    expect(ids()).toEqual(['m4', 'm5', 'm6', 'm7', 'm8'])
    expect(state().transcript?.newer_cursor).toBe('n8')
    await app.actions.loadNewer()
    expect(ids()).toEqual(['m4', 'm5', 'm6', 'm7', 'm8', 'm9', 'm10', 'm11'])
    expect(firstText(state().transcript?.messages.get('m11'))).toBe('late')
    expect(state().transcript?.newer_cursor).toBeNull()
    // At the newest: live messages are placed again.
    emit(messageMut(msg('m12', 12, { parts: [text('p', 'new')] })))
    frame()
    expect(ids()?.at(-1)).toBe('m12')
    // Older pages still load above the window.
    host.on('session.messages', ({ cursor }) =>
      cursor === 'c4' ? { items: [msg('m1', 1)], next_cursor: null } : { items: [], next_cursor: null },
    )
    await app.actions.loadOlder()
    expect(ids()?.slice(0, 2)).toEqual(['m1', 'm4'])
  })

  it('a hit already loaded is focused without a request; Jump to latest and a prompt leave a window for the newest page', async () => {
    const latest: MessagesPage = { items: [msg('m9', 9), msg('m10', 10)], next_cursor: 'c9' }
    const { host, app, state } = setup(latest)
    await app.actions.boot()
    const count = () => host.calls.filter((c) => c.method === 'session.messages').length
    const before = count()
    await app.actions.openAt(SID, 'm9')
    expect(count()).toBe(before)
    expect(state().focus?.message_id).toBe('m9')

    const around: MessagesPage = {
      items: [msg('m2', 2), msg('m3', 3)],
      next_cursor: 'c2',
      newer_cursor: 'n3',
    }
    host.on('session.messages', (p) => (p.around ? around : latest))
    const ids = () =>
      state()
        .transcript?.messages.toArray()
        .map((m) => m.message_id)
    // Every transcript written on the way back holds messages: no empty one in between.
    const seen: number[] = []
    const stop = app.store.subscribe((s) => seen.push(s.transcript?.messages.length ?? -1))
    await app.actions.openAt(SID, 'm3')
    expect(ids()).toEqual(['m2', 'm3'])
    await app.actions.showLatest()
    stop()
    expect(ids()).toEqual(['m9', 'm10'])
    expect(state().transcript).toMatchObject({ older_cursor: 'c9', newer_cursor: null })
    expect(seen.filter((n) => n === 0)).toEqual([])

    await app.actions.openAt(SID, 'm3')
    expect(state().transcript?.newer_cursor).toBe('n3')
    await app.actions.send('hello')
    expect(ids()).toEqual(['m9', 'm10'])
    expect(state().transcript?.newer_cursor).toBeNull()
    // The newest page was read before the prompt went.
    const order = host.calls
      .map((c) => c.method)
      .filter((m) => m === 'session.messages' || m === 'session.prompt')
    expect(order.slice(-2)).toEqual(['session.messages', 'session.prompt'])
  })

  it('another hit in the chat shown in a window asks for its page only, never the newest in between', async () => {
    const { host, app, state } = setup({ items: [msg('m9', 9), msg('m10', 10)], next_cursor: 'c9' })
    await app.actions.boot()
    const pageAround = (n: number): MessagesPage => ({
      items: [msg(`m${n - 1}`, n - 1), msg(`m${n}`, n), msg(`m${n + 1}`, n + 1)],
      next_cursor: `c${n - 1}`,
      newer_cursor: `n${n + 1}`,
    })
    host.on('session.messages', (p) => {
      // Only pages around a hit are expected here (a read of the newest page would fail the test).
      if (!p.around) throw new Error(`unexpected page: ${JSON.stringify(p)}`)
      return pageAround(Number(String(p.around).slice(1)))
    })
    await app.actions.openAt(SID, 'm3')
    const asked = () => host.calls.filter((c) => c.method === 'session.messages').map((c) => c.params)
    const before = asked().length
    await app.actions.openAt(SID, 'm6')
    expect(asked().slice(before)).toEqual([{ session_id: SID, around: 'm6', limit: 100 }])
    // One already in the window: no request at all.
    await app.actions.openAt(SID, 'm7')
    expect(asked().length).toBe(before + 1)
    expect(state().focus?.message_id).toBe('m7')
  })

  it('answers asked for the list a window replaced are not merged into the window', async () => {
    const { host, app, state, emit, frame } = setup({ items: [msg('m90', 90)], next_cursor: 'c90' })
    await app.actions.boot()
    const window: MessagesPage = { items: [msg('m5', 5)], next_cursor: 'c5', newer_cursor: 'n5' }
    let release: () => void = () => {}
    const gate = new Promise<void>((ok) => (release = ok))
    host.on('session.messages', async (p) => {
      if (p.around) return window
      await gate
      return p.cursor === 'c90'
        ? { items: [msg('m89', 89)], next_cursor: 'c89' }
        : { items: [msg('m90', 90), msg('m91', 91)], next_cursor: 'c90' }
    })
    // An older page and a heal (a delta that did not fit: the newest page is read) in flight…
    const older = app.actions.loadOlder()
    emit(delta('m91', 'p', 5, 'gap'))
    frame()
    await settle()
    // …when a hit far back opens its window; then they answer.
    await app.actions.openAt(SID, 'm5')
    release()
    await older
    await settle()
    frame()
    expect(
      state()
        .transcript?.messages.toArray()
        .map((m) => m.message_id),
    ).toEqual(['m5'])
    expect(state().transcript).toMatchObject({ older_cursor: 'c5', newer_cursor: 'n5' })
  })

  it('Jump to latest replaces the window even when its last newer page reached the newest first', async () => {
    const { host, app, state } = setup({ items: [msg('m9', 9)], next_cursor: 'c9' })
    await app.actions.boot()
    let release: () => void = () => {}
    const gate = new Promise<void>((ok) => (release = ok))
    host.on('session.messages', async (p) => {
      if (p.around) return { items: [msg('m2', 2)], next_cursor: 'c2', newer_cursor: 'n2' }
      if (p.after) return { items: [msg('m3', 3), msg('m9', 9)], next_cursor: 'c3', newer_cursor: null }
      await gate
      return { items: [msg('m9', 9)], next_cursor: 'c9' }
    })
    await app.actions.openAt(SID, 'm2')
    const windowList = state().transcript!.messages.growth.lineage
    const latest = app.actions.showLatest()
    await app.actions.loadNewer()
    expect(state().transcript?.newer_cursor).toBeNull()
    release()
    await latest
    // A new list (the view goes to its end on one), holding the newest page.
    expect(state().transcript!.messages.growth.lineage).not.toBe(windowList)
    expect(
      state()
        .transcript?.messages.toArray()
        .map((m) => m.message_id),
    ).toEqual(['m9'])
    expect(state().transcript?.older_cursor).toBe('c9')
  })

  it('a reconnect reads a window again where it is, and shows the newest page once its first message is gone', async () => {
    const chat = pagedChat(300)
    const pager = chat.pager
    const { host, app, state } = setup()
    host.on('session.messages', pager)
    await app.actions.boot()
    const ids = () =>
      state()
        .transcript?.messages.toArray()
        .map((m) => m.message_id) ?? []
    expect(ids().at(0)).toBe('m201')
    await app.actions.openAt(SID, 'm50')
    await app.actions.loadNewer()
    expect(ids()).toEqual(chat.ids(0, 200))
    expect(state().transcript?.newer_cursor).toBe('200')

    // A message in the window changes while the app is away.
    host.setConnected(false)
    chat.set(
      chat
        .all()
        .map((m) => (m.seq === 150 ? { ...m, revision: 2, parts: [text('p', 'changed meanwhile')] } : m)),
    )
    const firsts: string[] = []
    const stop = app.store.subscribe((s) => firsts.push(s.transcript?.messages.at(0)?.message_id ?? ''))
    host.setConnected(true)
    await settle()
    stop()
    // The same window, never the newest page in between (the view keeps the reader's place).
    expect(ids()).toEqual(chat.ids(0, 200))
    expect(state().transcript).toMatchObject({ older_cursor: null, newer_cursor: '200' })
    expect(firstText(state().transcript?.messages.get('m150'))).toBe('changed meanwhile')
    expect(firsts.filter((id) => id !== 'm1')).toEqual([])

    // Its first message cleared meanwhile: the window cannot be read again, the newest page shows.
    host.setConnected(false)
    chat.set(chat.all().slice(10))
    host.setConnected(true)
    await settle()
    expect(ids()).toEqual(chat.ids(-100))
    expect(state().transcript?.newer_cursor).toBeNull()
  })

  it('a reconnect does not undo a page the window loaded while it was read again', async () => {
    const chat = pagedChat(300)
    const { host, app, state } = setup()
    host.on('session.messages', chat.pager)
    await app.actions.boot()
    await app.actions.openAt(SID, 'm50')
    expect(state().transcript?.messages).toHaveLength(100)
    // The re-read's first answer waits until the reader has loaded the next newer page.
    let release: () => void = () => {}
    const gate = new Promise<void>((ok) => (release = ok))
    host.on('session.messages', async (p) => {
      if (p.around && p.limit === 1) await gate
      return chat.pager(p)
    })
    host.setConnected(false)
    host.setConnected(true)
    await settle()
    await app.actions.loadNewer()
    expect(state().transcript?.messages).toHaveLength(200)
    release()
    await settle()
    const ids = state()
      .transcript?.messages.toArray()
      .map((m) => m.message_id)
    expect(ids).toEqual(chat.ids(0, 200))
    expect(state().transcript?.newer_cursor).toBe('200')
  })

  it('a hit the host cannot find is reported, and the transcript stays as it was', async () => {
    const { host, app, state } = setup({ items: [msg('m9', 9)], next_cursor: 'c9' })
    await app.actions.boot()
    host.on('session.messages', () => {
      throw Object.assign(new Error('Message m3 is not in this chat’s history.'), { code: 'not_found' })
    })
    await app.actions.openAt(SID, 'm3')
    expect(
      state()
        .transcript?.messages.toArray()
        .map((m) => m.message_id),
    ).toEqual(['m9'])
    expect(state().transcript?.newer_cursor).toBeNull()
    expect(state().focus).toBeNull()
    expect(state().notice?.text).toMatch(/^Could not open that message/)
  })

  it('Retry and Regenerate run the turn again as a new version: a fork before its prompt, the prompt sent there', async () => {
    const { host, app, state } = setup({
      items: [
        msg('m1', 1, { role: 'user', turn_id: 'turn_a', parts: [text('u', '/error boom')] }),
        msg('m2', 2, { kind: 'error', turn_id: 'turn_a', parts: [text('e', 'boom')] }),
        msg('m3', 3, { role: 'user', turn_id: 'turn_b', parts: [text('u', 'hello')] }),
        msg('m4', 4, { role: 'assistant', turn_id: 'turn_b', parts: [text('a', 'hi')] }),
      ],
      next_cursor: null,
    })
    const child = info('ses_child', {
      parent: { parent_session_id: SID, fork_seq: 0, snapshot_id: 'snp' },
    })
    host
      .on('session.fork', () => child)
      .on('session.get_info', ({ session_id }) => (session_id === SID ? info(SID) : child))
      .on('session.steer', () => ({ status: 'queued' }))
    await app.actions.boot()
    host.clearCalls()
    await app.actions.retry('turn_a')
    await settle()
    // Not a second copy of the prompt in this chat: a fork just before it, prompted there.
    expect(host.calls.find((c) => c.method === 'session.fork')?.params).toMatchObject({
      session_id: SID,
      message_id: 'm1',
      before: true,
    })
    expect(host.calls.filter((c) => c.method === 'session.prompt').map((c) => c.params)).toEqual([
      { session_id: 'ses_child', query: '/error boom' },
    ])
    expect(state().transcript?.session_id).toBe('ses_child')

    await app.actions.openSession(SID)
    await settle()
    host.clearCalls()
    await app.actions.regenerate('m4')
    await settle()
    expect(host.calls.find((c) => c.method === 'session.fork')?.params).toMatchObject({
      session_id: SID,
      message_id: 'm3',
      before: true,
    })
    expect(host.calls.filter((c) => c.method === 'session.prompt').map((c) => c.params)).toEqual([
      { session_id: 'ses_child', query: 'hello' },
    ])
    expect(await app.actions.steer('  be brief ')).toBe(true)
    expect(host.calls.find((c) => c.method === 'session.steer')?.params).toEqual({
      session_id: 'ses_child',
      text: 'be brief',
    })
  })

  it('archives and unarchives, keeping the archive list in step', async () => {
    const { host, app, state } = setup()
    host
      .on('sessions.archive', ({ archived }) => info(SID, { archived: archived ?? true }))
      .on('sessions.archived', () => [])
    await app.actions.boot()
    await app.actions.loadArchived()
    await app.actions.archive(SID, true)
    expect(state().sessions).toEqual([])
    expect(state().archived?.map((s) => s.session_id)).toEqual([SID])
    expect(state().transcript?.info?.archived).toBe(true)
    await app.actions.archive(SID, false)
    expect(state().sessions.map((s) => s.session_id)).toEqual([SID])
    expect(state().archived).toEqual([])
  })

  it('clearing messages reloads the now empty transcript', async () => {
    let items = [msg('m1', 1)]
    const { host, app, state } = setup()
    host
      .on('session.messages', () => ({ items, next_cursor: null }))
      .on('sessions.clear_messages', () => info(SID))
    await app.actions.boot()
    expect(state().transcript?.messages).toHaveLength(1)
    items = []
    await app.actions.clearMessages(SID)
    expect(state().transcript?.messages.toArray()).toEqual([])
    expect(state().transcript?.loaded).toBe(true)
  })
})

describe('session list', () => {
  const ids = (app: ReturnType<typeof setup>['app']) => app.store.getState().sessions.map((s) => s.session_id)

  it('follows `sessions` events in place: a whole prompt costs no sessions.list refetch', async () => {
    const { host, app, state, frame, emit } = setup()
    host
      .on('sessions.list', () => [info(SID, { updated_at: 5 }), info('ses_2', { updated_at: 3 })])
      .on('session.get_info', () => info(SID, { updated_at: 5 }))
    await app.actions.boot()
    expect(host.count('sessions.list')).toBe(1)
    expect(ids(app)).toEqual([SID, 'ses_2'])

    // A prompt in the open session: its info changes reach every client as `sessions` events
    // (and subscribers also get them as `session` mutations); the list and the header follow.
    expect(await app.actions.send('Plan a trip')).toBe(true)
    const running = info(SID, { state: 'running', updated_at: 6, current_turn_id: 'turn_1' })
    host.emitInfo(running)
    emit({ variant: 'session', session_id: SID, info: running })
    // Applied with the frame's other live mutations: one state update and render per frame.
    expect(state().sessions[0].state).toBe('idle')
    frame()
    expect(state().sessions[0].state).toBe('running')
    emit(messageMut(msg('m1', 1, { role: 'user', parts: [text('u', 'Plan a trip')] })))
    const titled = info(SID, { state: 'running', title: 'Plan a trip', updated_at: 7, message_count: 1 })
    host.emitInfo(titled)
    emit({ variant: 'session', session_id: SID, info: titled })
    const idle = info(SID, { title: 'Plan a trip', updated_at: 8, message_count: 2 })
    host.emitInfo(idle)
    emit({ variant: 'session', session_id: SID, info: idle })
    frame()
    expect(state().sessions[0]).toEqual(idle)
    expect(state().transcript?.info).toEqual(idle)

    // Another window works in ses_2: it moves to the top, with no subscription to it here.
    host.emitInfo(info('ses_2', { state: 'running', updated_at: 9 }))
    frame()
    expect(ids(app)).toEqual(['ses_2', SID])
    expect(state().sessions[0].state).toBe('running')

    // Created elsewhere: it appears; archived: it leaves the list; removed: it is gone.
    host.emitInfo(info('ses_3', { created_at: 10, updated_at: 10 }))
    frame()
    expect(ids(app)).toEqual(['ses_3', 'ses_2', SID])
    host.emitInfo(info('ses_2', { archived: true, updated_at: 11 }))
    frame()
    expect(ids(app)).toEqual(['ses_3', SID])
    host.emitInfo(null, 'ses_3')
    frame()
    expect(ids(app)).toEqual([SID])

    await settle()
    frame()
    expect(host.count('sessions.list')).toBe(1)
    expect(state().transcript?.session_id).toBe(SID)
  })

  it('applies list events that came before the boot answer under it, not over it', async () => {
    const { host, app, state, frame } = setup()
    host.on('sessions.list', () => {
      // Sent while the list was being read: older than the answer.
      host.emitInfo(info('ses_2', { title: 'Older', updated_at: 1 }))
      return [info(SID, { updated_at: 5 }), info('ses_2', { title: 'Newer', updated_at: 4 })]
    })
    await app.actions.boot()
    await settle()
    frame()
    expect(state().sessions.find((s) => s.session_id === 'ses_2')?.title).toBe('Newer')
  })

  it('re-reads the list only after a reconnect', async () => {
    const { host, app } = setup()
    await app.actions.boot()
    host.emitInfo(info(SID, { title: 'Renamed', updated_at: 2 }))
    await settle()
    expect(host.count('sessions.list')).toBe(1)
    host.setConnected(false)
    host.setConnected(true)
    await settle()
    expect(host.count('sessions.list')).toBe(2)
  })

  it('opens another session when a `sessions` event says the open one was removed', async () => {
    const { host, app, state, frame } = setup()
    host.on('sessions.list', () => [info(SID, { updated_at: 5 }), info('ses_2')])
    await app.actions.boot()
    host.emitInfo(null, SID)
    frame()
    await settle()
    expect(ids(app)).toEqual(['ses_2'])
    expect(state().transcript?.session_id).toBe('ses_2')
    expect(host.calls.filter((c) => c.method === 'session.unsubscribe')[0]?.params).toEqual({
      session_id: SID,
    })
    expect(host.count('sessions.list')).toBe(1)
  })

  it('keeps a loaded archive in step with `sessions` events', async () => {
    const { host, app, state, frame } = setup()
    host
      .on('sessions.list', () => [info(SID, { updated_at: 5 }), info('ses_2', { updated_at: 4 })])
      .on('sessions.archived', () => [info('ses_old', { archived: true, updated_at: 2 })])
    await app.actions.boot()
    await app.actions.loadArchived()
    host.emitInfo(info('ses_2', { archived: true, updated_at: 6 }))
    frame()
    expect(state().archived?.map((s) => s.session_id)).toEqual(['ses_2', 'ses_old'])
    host.emitInfo(info('ses_old', { archived: false, updated_at: 7 }))
    frame()
    expect(state().archived?.map((s) => s.session_id)).toEqual(['ses_2'])
    expect(ids(app)).toEqual(['ses_old', SID])
    host.emitInfo(null, 'ses_2')
    frame()
    expect(state().archived).toEqual([])
    expect(host.count('sessions.archived')).toBe(1)
    expect(host.count('sessions.list')).toBe(1)
  })
})
