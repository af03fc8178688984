import { act } from 'react'
import { createRoot, type Root } from 'react-dom/client'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createArbor } from '../../src-shared/sdk'
import type { AppInfo } from '../../src-shared/contract'
import type { MessagesPage, PendingInteraction, SessionInfo } from '../../src-shared/types'
import { App } from '../../src-renderer/App'
import { AppContext } from '../../src-renderer/state/hooks'
import { createApp } from '../../src-renderer/state/store'
import { FakeHost, settle } from './fakeHost'
import { SID, approval, info, msg, text, toolCall } from './fixtures'

const APP: AppInfo = {
  version: '0.1.0',
  host: 'browser',
  data_dir: '/tmp/x',
  store: 'memory',
  models: [{ id: 'scripted', label: 'Scripted offline model', offline: true }],
  default_model: 'scripted',
  search_index: { indexed_upto: 0, total: 0, done: true },
}

beforeAll(() => {
  ;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
})

let root: Root | null = null
let container: HTMLElement | null = null

afterEach(() => {
  act(() => root?.unmount())
  container?.remove()
  root = null
})

async function render(
  opts: { page?: MessagesPage; pending?: PendingInteraction[]; session?: SessionInfo } = {},
) {
  const session = opts.session ?? info(SID, { title: 'Greetings' })
  const host = new FakeHost()
    .on('app.info', () => APP)
    .on('sessions.list', () => [session])
    .on('session.subscribe', () => ({ subscribed: true }))
    .on('session.messages', () => opts.page ?? { items: [], next_cursor: null })
    .on('session.interactions', () => opts.pending ?? [])
    .on('session.get_info', () => session)
    .on('session.prompt', () => ({ id: 'turn_1', command_id: 'cmd_1' }))
    .on('session.respond', ({ interaction_id }) => ({ interaction_id, status: 'approved' }))
    .on('session.unqueue', () => ({ removed: true }))
    .on('session.stop', () => ({ stopped: true }))
  const app = createApp(createArbor(host), { schedule: (run) => run(), initialSessionId: SID })
  container = document.createElement('div')
  document.body.append(container)
  root = createRoot(container)
  await act(async () => {
    root?.render(
      <AppContext value={app}>
        <App host="browser" hasToken />
      </AppContext>,
    )
    await app.actions.boot()
    await settle()
  })
  return { host, app, el: container }
}

const $ = (el: HTMLElement, sel: string) => el.querySelector(sel) as HTMLElement | null
const $$ = (el: HTMLElement, sel: string) => Array.from(el.querySelectorAll(sel)) as HTMLElement[]

function button(el: HTMLElement, name: string): HTMLButtonElement {
  const found = $$(el, 'button').find((b) => (b.getAttribute('aria-label') ?? b.textContent?.trim()) === name)
  if (!found) throw new Error(`no button "${name}"`)
  return found as HTMLButtonElement
}

/** A prompt and its reply: a toolbar each. */
const planATrip = (): MessagesPage => ({
  items: [
    msg('m1', 1, { role: 'user', parts: [text('u', 'Plan a trip')] }),
    msg('m2', 2, { parts: [text('a', 'Sure')] }),
  ],
  next_cursor: null,
})

describe('App', () => {
  it('shows the session, its model label and the approval mode', async () => {
    const { el } = await render()
    expect($(el, 'nav[aria-label="Sessions"]')?.textContent).toContain('Greetings')
    expect($(el, '[aria-current="page"]')?.textContent).toContain('Greetings')
    expect($(el, 'h1')?.textContent).toBe('Greetings')
    const model = $(el, 'select[aria-label="Model"]') as HTMLSelectElement
    expect(model.value).toBe('scripted')
    expect(model.selectedOptions[0]?.textContent).toBe('Scripted offline model')
    expect(($(el, 'select[aria-label="Approval mode"]') as HTMLSelectElement).value).toBe('ask')
  })

  it('renders user text, assistant markdown, actions, tool cards and one error card', async () => {
    const page: MessagesPage = {
      items: [
        msg('m5', 5, { kind: 'error', error_code: 'model_error', parts: [text('e', 'boom')] }),
        msg('m4', 4, { parts: [toolCall('c', { input: { path: 'a.txt' }, status: 'done', output: 'ok' })] }),
        msg('m3', 3, { role: 'system', kind: 'action', parts: [text('a', 'Model changed to X')] }),
        msg('m2', 2, {
          parts: [text('t', '**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<b>raw</b>')],
        }),
        msg('m1', 1, { role: 'user', parts: [text('u', 'Hi *there*')] }),
      ],
      next_cursor: null,
    }
    const { el } = await render({ page })
    const log = $(el, '[role="log"][aria-label="Transcript"]')!
    const articles = $$(log, 'article')
    expect(articles.map((a) => `${a.dataset.role}/${a.dataset.kind}`)).toEqual([
      'user/text',
      'assistant/text',
      'system/action',
      'assistant/text',
      'assistant/error',
    ])
    expect($(articles[0], '.user-text')?.textContent).toBe('Hi *there*') // user text is not markdown
    expect($(articles[1], 'strong')?.textContent).toBe('bold')
    expect($(articles[1], 'table')).not.toBeNull()
    expect($(articles[1], 'b')).toBeNull() // raw HTML is never rendered...
    expect(articles[1].textContent).toContain('<b>raw</b>') // ...only shown as text
    expect($(articles[2], '.action-text')?.textContent).toBe('Model changed to X')
    // Every message can be forked from; the error offers Retry.
    expect($$(log, 'button').filter((b) => b.textContent?.includes('Fork from here'))).toHaveLength(5)
    button(articles[4], 'Retry')
    expect($(articles[3], '[aria-label="Tool call write_file"]')?.textContent).toContain('Done')
    expect($$(el, '[role="alert"]')).toHaveLength(1)
    expect($(el, '[role="alert"]')?.textContent).toContain('boom')
  })

  it('a short reply fits its bubble to its text; a long one fills the column', async () => {
    const long = 'A long reply that wraps. '.repeat(80)
    const page: MessagesPage = {
      items: [msg('m2', 2, { parts: [text('t', long)] }), msg('m1', 1, { parts: [text('s', 'Short.')] })],
      next_cursor: null,
    }
    const { el } = await render({ page })
    const bubbles = $$(el, '[role="log"] article .bubble')
    expect(bubbles.map((b) => b.className)).toEqual(['bubble', 'bubble bubble-fill'])
  })

  it('a reply cut off by the output limit: its cut-off call says so, and Continue sends the continue prompt', async () => {
    const page: MessagesPage = {
      items: [
        msg('m3', 3, {
          kind: 'error',
          error_code: 'output_limit',
          parts: [text('e', "The reply was cut off: it reached the model's output limit.")],
        }),
        msg('m2', 2, {
          parts: [
            text('t', 'Writing the file now'),
            toolCall('c', { status: 'cancelled', incomplete: true, error: 'not run' }),
          ],
        }),
        msg('m1', 1, { role: 'user', parts: [text('u', 'Write it')] }),
      ],
      next_cursor: null,
    }
    const { el, host } = await render({ page })
    const alert = $(el, '[role="alert"]')!
    expect(alert.textContent).toContain('The reply hit the output limit')
    expect($$(alert, 'button').map((b) => b.textContent)).toEqual(['Continue'])
    expect($(el, '[aria-label="Tool call write_file"]')?.textContent).toContain('Cut off, not run')
    await act(async () => {
      button(alert, 'Continue').click()
      await settle()
    })
    const sent = host.calls.filter((c) => c.method === 'session.prompt').map((c) => c.params)
    expect(sent).toEqual([{ session_id: SID, query: 'Continue exactly where your last reply stopped.' }])
  })

  it('shows a pending approval with "Approve once" focused, and answers it', async () => {
    const part = approval('p1')
    const { el, host } = await render({
      page: { items: [msg('m1', 1, { parts: [part] })], next_cursor: null },
      pending: [
        {
          interaction_id: part.interaction_id,
          session_id: SID,
          turn_id: 't',
          message_id: 'm1',
          part,
          created_at: 1,
        },
      ],
    })
    const dialog = $(el, '[role="dialog"]')!
    expect(dialog.textContent).toContain('write_file')
    expect(dialog.textContent).toContain('"path": "a.txt"')
    expect(document.activeElement?.textContent).toBe('Approve once')
    for (const name of ['For this chat', 'Always, in every chat', 'Deny…']) button(dialog, name)
    // Esc asks first: nothing is sent until the denial is confirmed.
    await act(async () => {
      document.activeElement?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))
      await settle()
    })
    expect(host.methods()).not.toContain('session.respond')
    const reason = $(dialog, 'input[aria-label="Reason (optional)"]') as HTMLInputElement
    expect(document.activeElement).toBe(reason)
    await act(async () => {
      setValue(reason, 'not that file')
      await settle()
    })
    await act(async () => {
      button(dialog, 'Deny').click()
      await settle()
    })
    expect(host.calls.find((c) => c.method === 'session.respond')?.params).toEqual({
      session_id: SID,
      interaction_id: part.interaction_id,
      decision: 'deny',
      reason: 'not that file',
    })
  })

  it('answers a question interaction', async () => {
    const part = approval('q1', { kind: 'question', question: 'Which one?', tool_name: undefined })
    const { el, host } = await render({
      pending: [
        {
          interaction_id: part.interaction_id,
          session_id: SID,
          turn_id: 't',
          message_id: 'm1',
          part,
          created_at: 1,
        },
      ],
    })
    const input = $(el, 'input[aria-label="Your answer"]') as HTMLInputElement
    expect($(el, '[role="dialog"]')?.textContent).toContain('Which one?')
    await act(async () => {
      setValue(input, 'The second')
      await settle()
    })
    await act(async () => {
      button(el, 'Answer').click()
      await settle()
    })
    expect(host.calls.find((c) => c.method === 'session.respond')?.params).toEqual({
      session_id: SID,
      interaction_id: part.interaction_id,
      answer: 'The second',
    })
  })

  it('Enter sends, Shift+Enter does not; Stop and queued prompts show while running', async () => {
    const session = info(SID, {
      state: 'running',
      queue: [{ command_id: 'cmd_9', kind: 'prompt', summary: 'Prompt: second question', created_at: 1 }],
    })
    const { el, host } = await render({ session })
    const box = $(el, 'textarea[aria-label="Message"]') as HTMLTextAreaElement
    await act(async () => {
      setValue(box, 'hello')
      await settle()
    })
    await act(async () => {
      box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', shiftKey: true, bubbles: true }))
      await settle()
    })
    expect(host.methods()).not.toContain('session.prompt')
    await act(async () => {
      box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }))
      await settle()
    })
    expect(host.calls.find((c) => c.method === 'session.prompt')?.params).toEqual({
      session_id: SID,
      query: 'hello',
    })
    expect(box.value).toBe('')

    const queued = $(el, 'ul[aria-label="Queued"]')!
    expect(queued.textContent).toContain('second question')
    await act(async () => {
      button(queued, 'Remove queued prompt: second question').click()
      await settle()
    })
    expect(host.calls.find((c) => c.method === 'session.unqueue')?.params).toEqual({
      session_id: SID,
      command_id: 'cmd_9',
    })
    await act(async () => {
      button(el, 'Stop').click()
      await settle()
    })
    expect(host.methods()).toContain('session.stop')
  })

  it('renders a 10,000-message session as a small window of rows', async () => {
    // happy-dom does no layout: give rows and the viewport sizes.
    const offset = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'offsetHeight')
    const client = Object.getOwnPropertyDescriptor(Element.prototype, 'clientHeight')
    Object.defineProperty(HTMLElement.prototype, 'offsetHeight', {
      configurable: true,
      get(this: HTMLElement) {
        return this.classList.contains('vitem') ? 100 : 0
      },
    })
    Object.defineProperty(Element.prototype, 'clientHeight', {
      configurable: true,
      get(this: Element) {
        return this.classList.contains('transcript') ? 800 : 0
      },
    })
    try {
      const items = Array.from({ length: 10_000 }, (_, i) =>
        msg(`m${i + 1}`, i + 1, { parts: [text(`p${i}`, `message number ${i + 1}`)] }),
      )
      const { el } = await render({ page: { items, next_cursor: null } })
      const articles = $$(el, '[role="log"] article')
      expect(articles.length).toBeGreaterThan(0)
      expect(articles.length).toBeLessThan(60)
      // The spaces above and below the window hold the other rows' height, so the scrollbar is
      // true to the length.
      const list = $(el, '.vlist') as HTMLElement
      const spaces = parseFloat(list.style.paddingTop) + parseFloat(list.style.paddingBottom)
      expect(spaces + articles.length * 100).toBeGreaterThan(10_000 * 100)
    } finally {
      if (offset) Object.defineProperty(HTMLElement.prototype, 'offsetHeight', offset)
      if (client) Object.defineProperty(Element.prototype, 'clientHeight', client)
    }
  })

  it("leaves the messages' toolbars as they are when a turn starts and ends", async () => {
    // Each turn changes the session's state twice; the visible messages' actions do not depend
    // on it (their toolbars were all rendered again at both, in the frame that starts a reply).
    const { el, host } = await render({ page: planATrip() })
    const toolbars = $$(el, '.msg-toolbar')
    expect(toolbars).toHaveLength(2)
    const changed: MutationRecord[] = []
    const watch = new MutationObserver((records) => changed.push(...records))
    for (const t of toolbars)
      watch.observe(t, { subtree: true, attributes: true, childList: true, characterData: true })
    for (const state of ['running', 'idle'] as const) {
      await act(async () => {
        host.emitInfo(info(SID, { title: 'Greetings', state }))
        await settle()
      })
      // The change arrived: the composer offers Stop while the turn runs.
      expect($$(el, 'button').some((b) => b.getAttribute('aria-label') === 'Stop')).toBe(state === 'running')
    }
    watch.disconnect()
    expect(changed.map((r) => `${r.type} ${r.attributeName ?? ''}`)).toEqual([])
    expect($$(el, '.msg-toolbar')).toEqual(toolbars)
  })

  it('History: a streamed frame draws again only the checkpoint whose description it changed', async () => {
    const { el, host } = await render({ page: planATrip() })
    const snapshot = (head_seq: number) => ({
      snapshot_id: `snap_${head_seq}`,
      session_id: SID,
      head_seq,
      head_message_id: `m${head_seq}`,
      reason: 'step',
      step: head_seq,
      hash: `${head_seq}`.repeat(16),
      created_at: Date.now() - head_seq * 1000,
    })
    host.on('session.snapshots', () => [snapshot(2), snapshot(1)])
    await act(async () => {
      button(el, 'History').click()
      await settle()
    })
    const rows = $$(el, '.checkpoint')
    expect(rows.map((r) => $(r, '.checkpoint-change')?.textContent)).toEqual([
      'Reply: “Sure”',
      'You: “Plan a trip”',
    ])
    // Each row formats its time when it is drawn.
    // (`format` is a getter that hands out the bound function; typed as a plain property here.)
    const proto = Intl.DateTimeFormat.prototype as unknown as { format: unknown }
    const format = vi.spyOn(proto, 'format', 'get')
    try {
      await act(async () => {
        host.emit({
          type: 'mutation',
          mutation: {
            variant: 'delta',
            session_id: SID,
            message_id: 'm2',
            part_id: 'a',
            field: 'text',
            offset: 4,
            text: ' thing',
          },
        })
        await settle()
      })
      expect($(el, '[aria-label="Assistant"]')?.textContent).toContain('Sure thing')
      // What a checkpoint says it added follows the transcript: that row is drawn again (its
      // time formatted once), the other is not.
      expect($$(el, '.checkpoint-change').map((c) => c.textContent)).toEqual([
        'Reply: “Sure thing”',
        'You: “Plan a trip”',
      ])
      expect(format).toHaveBeenCalledTimes(1)
    } finally {
      format.mockRestore()
    }
  })

  it("offers Fork from here on every message and edit-and-resend on the user's own", async () => {
    const { el, host } = await render({ page: planATrip() })
    host.on('session.fork', () =>
      info('ses_child', { parent: { parent_session_id: SID, fork_seq: 1, snapshot_id: 's' } }),
    )
    const actions = $(el, '[aria-label="Actions for message 2"]')!
    await act(async () => {
      button(actions, 'Fork from here').click()
      await settle()
    })
    expect(host.calls.find((c) => c.method === 'session.fork')?.params).toMatchObject({
      session_id: SID,
      message_id: 'm2',
    })
    expect(button($(el, '[aria-label="Actions for message 1"]')!, 'Edit')).toBeTruthy()
  })
})

/** Sets a controlled input's value the way a user's typing does (React listens to `input`). */
function setValue(el: HTMLInputElement | HTMLTextAreaElement, value: string) {
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype
  Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(el, value)
  el.dispatchEvent(new Event('input', { bubbles: true }))
}
