import { describe, expect, it } from 'vitest'
import { appInfo } from '../../src-main/app-info'
import { createRouter, type Peer } from '../../src-main/ipc/router'
import { IDLE_MS, MAX_OPEN, Transfers } from '../../src-main/ipc/transfers'
import type { ResponseOf } from '../../src-shared/contract'
import { ArborError } from '../../src-shared/errors'
import { cutText } from '../../src-shared/cut-text'
import { TRANSFER_PART_CHARS } from '../../src-shared/limits'
import { MAX_IMPORT_CHARS, type Method, type RequestOf } from '../../src-shared/schemas'
import { sqliteRuntime, writeMessages } from './helpers'

/** A router on a real runtime, and two connections to it. */
function setup() {
  const runtime = sqliteRuntime()
  const router = createRouter(runtime, appInfo(runtime, 'browser'))
  const peer = (id: string): Peer => ({ id, send: () => {} })
  const [a, b] = [peer('a'), peer('b')]
  const call = (p: Peer, method: Method, params: unknown) => router.handle(method, params, p)
  const ok = async <M extends Method>(p: Peer, method: M, params: RequestOf<M>) => {
    const r = await call(p, method, params)
    if (!r.ok) throw new Error(`${method}: ${r.error.code}: ${r.error.message}`)
    return r.data as ResponseOf<M>
  }
  const refused = async (p: Peer, method: Method, params: unknown) => {
    const r = await call(p, method, params)
    if (r.ok) throw new Error(`${method} was not refused`)
    return r.error
  }
  return { runtime, router, a, b, ok, refused }
}

describe('chat files in pieces over a transport (sessions.export_open/read, import_write/commit)', () => {
  it('an export is read a part at a time and ends with its last part; the pieces import back whole', async () => {
    const { runtime, a, b, ok, refused } = setup()
    const s = await runtime.sessions.create({ title: 'Pieces' })
    writeMessages(runtime, s.session_id, 30, 'p', (i) => `${i} ${'ünïcödé 😀 '.repeat(9_000)}`)
    const t = await ok(a, 'sessions.export_open', { session_id: s.session_id, format: 'json' })
    expect(t).toMatchObject({ format: 'json', filename: 'Pieces.json', mime_type: 'application/json' })
    expect(t.parts).toBeGreaterThan(2)
    // Another connection cannot read it.
    expect(await refused(b, 'sessions.export_read', { transfer_id: t.transfer_id, index: 0 })).toMatchObject({
      code: 'not_found',
    })
    const out = await refused(a, 'sessions.export_read', { transfer_id: t.transfer_id, index: t.parts })
    expect(out.code).toBe('invalid_request')
    expect(out.message).toContain(`has ${t.parts} parts`)
    const parts: string[] = []
    for (let index = 0; index < t.parts; index++)
      parts.push((await ok(a, 'sessions.export_read', { transfer_id: t.transfer_id, index })).text)
    expect(parts.every((p) => p.length <= TRANSFER_PART_CHARS)).toBe(true)
    const text = parts.join('')
    expect(text.length).toBe(t.chars)
    // Whole characters only: no piece starts or ends in the middle of a surrogate pair.
    expect(parts.every((p) => !/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(p))).toBe(true)
    const same = (x: string) => x.replace(/"exported_at": \d+/, '')
    expect(same(text)).toBe(same((await runtime.sessions.export(s.session_id, { format: 'json' })).text))
    // Read to the end, the export is gone.
    const gone = await refused(a, 'sessions.export_read', { transfer_id: t.transfer_id, index: 0 })
    expect(gone.code).toBe('not_found')
    expect(gone.message).toContain('Start the export again')

    // Written back in pieces, then committed: the same chat.
    let transfer_id: string | undefined
    for (const piece of cutText(text, TRANSFER_PART_CHARS)) {
      const w = await ok(a, 'sessions.import_write', { ...(transfer_id ? { transfer_id } : {}), text: piece })
      transfer_id = w.transfer_id
    }
    const { sessions } = await ok(a, 'sessions.import_commit', { transfer_id: transfer_id! })
    expect(sessions.map((x) => [x.title, x.message_count])).toEqual([['Pieces', 30]])
    expect(await refused(a, 'sessions.import_commit', { transfer_id: transfer_id! })).toMatchObject({
      code: 'not_found',
    })
  })

  it('a damaged file is refused at the commit, writes nothing, and its transfer ends', async () => {
    const { runtime, a, ok, refused } = setup()
    const before = (await runtime.sessions.list()).length
    const { transfer_id } = await ok(a, 'sessions.import_write', { text: '{"format":"arbor-chat",' })
    await ok(a, 'sessions.import_write', { transfer_id, text: '"version":1,"sessions":[' })
    const err = await refused(a, 'sessions.import_commit', { transfer_id })
    expect(err.code).toBe('invalid_request')
    expect((await runtime.sessions.list()).length).toBe(before)
    expect((await refused(a, 'sessions.import_commit', { transfer_id })).code).toBe('not_found')
  })

  it('an import larger than Arbor takes is refused at the piece that passes the limit', async () => {
    const { a, ok, refused } = setup()
    // One string used for every piece: the pieces kept cost one string's memory.
    const piece = 'x'.repeat(TRANSFER_PART_CHARS)
    const pieces = MAX_IMPORT_CHARS / TRANSFER_PART_CHARS
    const { transfer_id } = await ok(a, 'sessions.import_write', { text: piece })
    for (let i = 1; i < pieces; i++) await ok(a, 'sessions.import_write', { transfer_id, text: piece })
    const err = await refused(a, 'sessions.import_write', { transfer_id, text: 'y' })
    expect(err.code).toBe('payload_too_large')
    expect(err.message).toContain('128 MB')
    // It cannot go on, so it is gone at once (not held for 10 minutes).
    expect((await refused(a, 'sessions.import_write', { transfer_id, text: 'y' })).code).toBe('not_found')
  })

  it('a closed connection drops its transfers; the others stay', async () => {
    const { router, a, b, ok, refused } = setup()
    const mine = await ok(a, 'sessions.import_write', { text: 'a' })
    const theirs = await ok(b, 'sessions.import_write', { text: 'b' })
    router.disconnect(a)
    const again = { transfer_id: mine.transfer_id, text: 'c' }
    expect((await refused(a, 'sessions.import_write', again)).code).toBe('not_found')
    expect(await ok(b, 'sessions.import_write', { transfer_id: theirs.transfer_id, text: 'c' })).toEqual({
      transfer_id: theirs.transfer_id,
      chars: 2,
    })
  })

  it('text is cut into pieces of at most the size, never inside a surrogate pair', () => {
    const text = `a${'😀'.repeat(5)}bc`
    const pieces = cutText(text, 2)
    expect(pieces.join('')).toBe(text)
    expect(pieces).toEqual(['a', '😀', '😀', '😀', '😀', '😀', 'bc'])
    expect(cutText('abcde', 2)).toEqual(['ab', 'cd', 'e'])
    expect(cutText('', 2)).toEqual([])
    // A size of one still makes progress (a lone half is then unavoidable); none is refused.
    expect(cutText('😀', 1).join('')).toBe('😀')
    expect(() => cutText('abc', 0)).toThrow(RangeError)
  })

  it(`at most ${MAX_OPEN} at once per connection, and one unused for ${IDLE_MS / 60_000} minutes is dropped`, () => {
    let clock = 0
    const t = new Transfers(() => clock)
    const ids = Array.from({ length: MAX_OPEN }, () => t.write('p', undefined, 'x').transfer_id)
    expect(() => t.write('p', undefined, 'x')).toThrow(ArborError)
    expect(() => t.write('p', undefined, 'x')).toThrow(/already in progress/)
    // Another connection has its own allowance.
    expect(t.write('q', undefined, 'x').chars).toBe(1)
    // Used just before the limit, the first stays; the rest expire.
    clock = IDLE_MS
    t.write('p', ids[0], 'y')
    clock = IDLE_MS + 1
    const fresh = t.write('p', undefined, 'z')
    // 'xy' and 'z' only: the 7 others and the other connection's, unused since, are gone.
    expect(t.held()).toBe(3)
    expect(() => t.write('p', ids[1], 'y')).toThrow(/was unused for 10 minutes/)
    expect(t.take('p', ids[0]!)).toEqual(['x', 'y'])
    expect(t.take('p', fresh.transfer_id)).toEqual(['z'])
  })
})
