import { describe, expect, it } from 'vitest'
import { chatFile, type ChatFile } from '../../src-main/runtime/transfer/format'
import { readChatFile, splitChatFile } from '../../src-main/runtime/transfer/read'
import { ArborError } from '../../src-shared/errors'
import { turnsDuring } from './helpers'

/** Texts that look like the JSON around them: brackets, commas, quotes and backslashes. */
const TRICKY = [
  'plain',
  'a "quoted" word, and a comma',
  'brackets ]}, {[ and "messages": [1, 2]',
  'a backslash at the end \\',
  'two backslashes then a quote \\\\"',
  'line\nbreak\ttab and unicode ü 🎉 \u2028',
  '',
]

function message(seq: number, text: string) {
  return {
    message_id: `msg_${seq}`,
    seq,
    role: seq % 2 ? 'user' : 'assistant',
    kind: 'text',
    status: 'complete',
    parts: [
      { type: 'text', part_id: `prt_${seq}`, text },
      {
        type: 'tool_call',
        part_id: `prt_t${seq}`,
        tool_call_id: `tc_${seq}`,
        name: 'write',
        input_text: '{"messages":[]}',
        // Arrays (and a "messages" key) deeper in a message are the message's own.
        input: { messages: [[1, 2], { a: ['x', 'y'] }], list: [] },
        status: 'done',
      },
    ],
    created_at: seq,
    updated_at: seq,
  }
}

const file = {
  format: 'arbor.chat',
  version: 1,
  exported_at: 5,
  app: 'Arbor',
  sessions: [
    {
      session_id: 'ses_a',
      parent_session_id: null,
      fork_seq: 0,
      title: 'A [chat], "quoted"',
      model: 'demo',
      created_at: 1,
      updated_at: 2,
      visible_from_seq: 0,
      context_from_seq: 0,
      messages: TRICKY.map((t, i) => message(i + 1, t)),
    },
    {
      session_id: 'ses_b',
      parent_session_id: 'ses_a',
      fork_seq: 3,
      title: 'messages',
      model: 'demo',
      created_at: 3,
      updated_at: 4,
      visible_from_seq: 0,
      context_from_seq: 0,
      messages: [],
    },
  ],
}

const expected = (text: string): ChatFile => chatFile.parse(JSON.parse(text))

async function notJson(text: string | string[]): Promise<void> {
  const err = await readChatFile(text).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ArborError)
  expect((err as ArborError).message).toContain('it is not JSON')
}

describe('Reading a chat file a slice at a time', () => {
  it('reads every layout of the same file as JSON.parse does', async () => {
    const layouts = [
      JSON.stringify(file),
      JSON.stringify(file, null, 2),
      JSON.stringify(file, null, '\t'),
      // Written with escapes, a key is not found by the splitter: the file is read whole.
      JSON.stringify(file).replaceAll('"messages":', '"\\u006dessages":'),
      // The sessions before the other keys of the file.
      JSON.stringify({ sessions: file.sessions, format: file.format, version: 1, exported_at: 5 }),
    ]
    for (const text of layouts) expect(await readChatFile(text)).toEqual(expected(text))
    // Each was taken apart (so read a slice at a time), but the one with the escaped keys.
    const parts = await Promise.all(layouts.map(splitChatFile))
    expect(parts.map((p) => p?.messages.length)).toEqual([2, 2, 2, 0, 2])
    expect(parts[1]!.messages.map((m) => m?.length)).toEqual([TRICKY.length, 0])
    expect(JSON.parse(parts[0]!.frame)).toEqual({
      ...file,
      sessions: file.sessions.map((s) => ({ ...s, messages: [] })),
    })
    // Every tricky text came back as it was written.
    const back = await readChatFile(layouts[0]!)
    expect(back.sessions[0]!.messages.map((m) => m.parts[0]!.type === 'text' && m.parts[0].text)).toEqual(
      TRICKY,
    )
    expect(back.sessions[1]!.messages).toEqual([])
  })

  it('reads a file in pieces cut anywhere (inside strings, escapes and keys) as the file whole', async () => {
    for (const text of [JSON.stringify(file), JSON.stringify(file, null, 2)]) {
      const whole = await splitChatFile(text)
      const want = expected(text)
      // Every cut into two, and pieces of 1 to 9 characters.
      for (let at = 0; at <= text.length; at++) {
        const pieces = [text.slice(0, at), text.slice(at)]
        expect(await splitChatFile(pieces)).toEqual(whole)
      }
      for (let size = 1; size <= 9; size++) {
        const pieces = text.match(new RegExp(`[^]{1,${size}}`, 'g'))!
        expect(await splitChatFile(pieces)).toEqual(whole)
        expect(await readChatFile(pieces)).toEqual(want)
      }
    }
    // A text much longer than a piece, full of escapes, read on from where each piece ended.
    const longText = 'a \\"quoted\\" \\\\ path \\'.repeat(400)
    const long = JSON.stringify({
      ...file,
      sessions: [{ ...file.sessions[0]!, messages: [message(1, longText)] }],
    })
    for (const size of [3, 64, 1000]) {
      const pieces = long.match(new RegExp(`[^]{1,${size}}`, 'g'))!
      expect(await readChatFile(pieces)).toEqual(expected(long))
    }
    // Not taken apart in pieces either: read whole, the same.
    const escaped = JSON.stringify(file).replaceAll('"messages":', '"\\u006dessages":')
    expect(await readChatFile(escaped.match(/[^]{1,7}/g)!)).toEqual(expected(escaped))
    // Cut off in the middle of a string: not JSON, in pieces as whole.
    const cut = JSON.stringify(file).slice(0, 300)
    await notJson(cut)
    expect(await splitChatFile([cut.slice(0, 150), cut.slice(150)])).toBeNull()
  })

  it('reads a long file with the event loop free between slices', async () => {
    const long = { ...file, sessions: [{ ...file.sessions[0]!, messages: [] as unknown[] }] }
    for (let i = 1; i <= 3_000; i++) long.sessions[0]!.messages.push(message(i, TRICKY[i % TRICKY.length]!))
    const text = JSON.stringify(long)
    const [read, turns] = await turnsDuring(() => readChatFile(text))
    expect(read).toEqual(expected(text))
    expect(turns).toBeGreaterThanOrEqual(6)
  })

  it('refuses what is not JSON, wherever the mistake is', async () => {
    const text = JSON.stringify(file)
    /** The file with one change, which must be there to make. */
    const changed = (from: string, to: string) => {
      expect(text).toContain(from)
      return text.replace(from, to)
    }
    const at = text.indexOf('{"message_id":"msg_2"')
    expect(at).toBeGreaterThan(0)
    await notJson(changed('"updated_at":7}]', '"updated_at":7},]'))
    await notJson(`${text.slice(0, at)},${text.slice(at)}`)
    await notJson(`${text.slice(0, at - 1)}${text.slice(at)}`)
    await notJson(changed('"messages":[]', '"messages":[}'))
    await notJson(changed('"messages":[]', '"messages":[,]'))
    await notJson(text.slice(0, -1))
    await notJson(`${text}]`)
    await notJson(changed('"title":"messages"', '"title":"messages'))
  })

  it('names the damaged message by its place in the file', async () => {
    const bad = structuredClone(file)
    bad.sessions[0]!.messages[4]!.kind = 'poem'
    const err = await readChatFile(JSON.stringify(bad)).catch((e: unknown) => e)
    expect((err as ArborError).message).toContain('This chat file is damaged (sessions.0.messages.4.kind')
  })
})
