import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { openStore, type Store } from '../../src-main/store'
import { newId } from '../../src-shared/ids'
import type { Row } from '../../src-main/store/sqlite/db'
import { toSession } from '../../src-main/store/sqlite/rows'
import { refusal, sqliteRuntime, tempDir } from './helpers'

/** A store on a fresh folder, and a way to write its settings table behind its back. */
function fileStore() {
  const dataDir = tempDir()
  let store: Store = openStore({ kind: 'sqlite', dataDir })
  return {
    dataDir,
    get store() {
      return store
    },
    reopen() {
      store.close()
      store = openStore({ kind: 'sqlite', dataDir })
    },
    /** Writes a raw settings row from a second connection, as an older Arbor or a damaged disk would. */
    writeRaw(key: string, value: string) {
      const db = new Database(join(dataDir, 'arbor.db'))
      try {
        db.prepare(
          'INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
        ).run(key, value)
      } finally {
        db.close()
      }
    },
    close() {
      store.close()
    },
  }
}

describe('typed settings', () => {
  it('round-trips each key as its declared type, across a reopen', () => {
    const f = fileStore()
    expect(f.store.getSetting('providers')).toBeUndefined()
    f.store.setSetting('app', { theme: 'dark' })
    f.store.setSetting('always_allowed_tools', ['read_file'])
    f.store.setSetting('providers', [
      { provider_id: 'ollama', kind: 'openai-compatible', name: 'Ollama', base_url: 'http://x', models: [] },
    ])
    f.store.setSetting('fts_indexed_upto', 42)
    f.reopen()
    expect(f.store.getSetting('app')).toEqual({ theme: 'dark' })
    expect(f.store.getSetting('always_allowed_tools')).toEqual(['read_file'])
    expect(f.store.getSetting('providers')?.[0]?.provider_id).toBe('ollama')
    expect(f.store.getSetting('fts_indexed_upto')).toBe(42)
    f.close()
  })

  it('reads rows written by the earlier string API unchanged', () => {
    const f = fileStore()
    f.close()
    // What JSON.stringify(...) and String(upto) stored before the settings were typed.
    f.writeRaw('always_allowed_tools', '["write_file","read_file"]')
    f.writeRaw('fts_indexed_upto', '17')
    f.writeRaw('app', '{"default_model":"scripted","default_security":"ask","theme":"system"}')
    f.reopen()
    expect(f.store.getSetting('always_allowed_tools')).toEqual(['write_file', 'read_file'])
    expect(f.store.getSetting('fts_indexed_upto')).toBe(17)
    expect(f.store.getSetting('app')?.theme).toBe('system')
    f.close()
  })

  it('turns a value that is not JSON into a store_error naming the key', async () => {
    const f = fileStore()
    f.writeRaw('providers', '[{"provider_id": "ollama",')
    const err = await refusal(() => f.store.getSetting('providers'))
    expect(err.code).toBe('store_error')
    expect(err.message).toContain('"providers"')
    expect(err.message).toContain('not valid JSON')
    f.close()
  })

  it('turns a value of the wrong shape into a store_error naming the key', async () => {
    const f = fileStore()
    f.writeRaw('mcp_servers', '{"server_id":"x"}')
    f.writeRaw('always_allowed_tools', '["read_file", 3]')
    f.writeRaw('fts_indexed_upto', '"12"')
    for (const key of ['mcp_servers', 'always_allowed_tools', 'fts_indexed_upto'] as const) {
      const err = await refusal(() => f.store.getSetting(key))
      expect(err.code, key).toBe('store_error')
      expect(err.message, key).toContain(`"${key}"`)
    }
    f.close()
  })

  it('replaces a damaged row when the key is saved again', () => {
    const f = fileStore()
    f.writeRaw('app', 'not json')
    f.store.setSetting('app', { theme: 'light' })
    expect(f.store.getSetting('app')).toEqual({ theme: 'light' })
    f.close()
  })

  it('surfaces a damaged row to the runtime caller as the same store_error', async () => {
    const rt = sqliteRuntime()
    rt.store.setSetting('app', { theme: 'dark' })
    expect(rt.settings().theme).toBe('dark')
    const db = new Database(join(rt.dataDir, 'arbor.db'))
    db.prepare("UPDATE settings SET value = '{' WHERE key = 'app'").run()
    db.close()
    const err = await refusal(() => rt.settings())
    expect(err.code).toBe('store_error')
    expect(err.message).toContain('"app"')
  })
})

describe('the kept queue of each session', () => {
  it('answers every change to a queue as a fresh read would, a rolled-back one included', async () => {
    const rt = sqliteRuntime()
    const store = rt.store
    const now = Date.now()
    const a = (await rt.sessions.create()).session_id
    const b = (await rt.sessions.create()).session_id
    const queued = (id: string) => store.listCommands(id, ['queued']).map((c) => c.command_id)
    const command = (command_id: string, session_id: string) =>
      store.enqueueCommand({
        command_id,
        session_id,
        kind: 'steer',
        payload: { kind: 'steer', text: command_id },
        status: 'queued',
        turn_id: null,
        created_at: now,
      } as never)
    expect(queued(a)).toEqual([])
    command('cmd_1', a)
    command('cmd_2', a)
    command('cmd_3', b)
    expect(queued(a)).toEqual(['cmd_1', 'cmd_2'])
    expect(queued(b)).toEqual(['cmd_3'])
    // Started: it leaves its queue (and only its own).
    store.setCommandStatus('cmd_1', 'active')
    expect(queued(a)).toEqual(['cmd_2'])
    expect(queued(b)).toEqual(['cmd_3'])
    // Back to the queue (recovery, an aborted command).
    store.setCommandStatus('cmd_1', 'queued')
    expect(queued(a)).toEqual(['cmd_1', 'cmd_2'])
    store.setCommandStatus('cmd_2', 'cancelled')
    expect(queued(a)).toEqual(['cmd_1'])
    // A write that rolls back leaves what a fresh read gives.
    expect(() =>
      store.transaction(() => {
        command('cmd_4', a)
        expect(queued(a)).toEqual(['cmd_1', 'cmd_4'])
        throw new Error('rolled back')
      }),
    ).toThrow('rolled back')
    expect(queued(a)).toEqual(['cmd_1'])
    // The Trash drops a session's queue (kept just before).
    expect(queued(b)).toEqual(['cmd_3'])
    store.trashSession(b, now)
    expect(queued(b)).toEqual([])
    // What is kept cannot be changed by a caller.
    const list = store.listCommands(a, ['queued'])
    expect(() => ((list[0] as { status: string }).status = 'done')).toThrow()
    expect(queued(a)).toEqual(['cmd_1'])
  })
})

describe('the kept row of each session', () => {
  it('answers after every message as a fresh read would, a rolled-back one included', async () => {
    const rt = sqliteRuntime()
    const store = rt.store
    const id = (await rt.sessions.create()).session_id
    const raw = new Database(join(rt.dataDir, 'arbor.db'), { readonly: true })
    const fresh = () => toSession(raw.prepare('SELECT * FROM sessions WHERE session_id = ?').get(id) as Row)
    let t = Date.now() + 1000
    const message = (text: string) => ({
      message_id: newId('msg'),
      session_id: id,
      role: 'user' as const,
      kind: 'text' as const,
      status: 'complete' as const,
      parts: [{ type: 'text' as const, part_id: newId('prt'), text }],
      revision: 1,
      created_at: ++t,
      updated_at: t,
    })
    try {
      expect(store.getSession(id)).toEqual(fresh())
      for (const text of ['one', 'two', 'three']) {
        store.insertMessage(message(text))
        expect(store.getSession(id)).toEqual(fresh())
      }
      expect(store.getSession(id)?.last_seq).toBe(3)
      expect(store.getSession(id)?.message_count).toBe(3)
      expect(() => store.transaction(() => (store.insertMessage(message('no')), fail()))).toThrow(
        'rolled back',
      )
      expect(store.getSession(id)).toEqual(fresh())
      store.transaction(() => store.insertMessage(message('four')))
      expect(store.getSession(id)).toEqual(fresh())
      // Two in one transaction; then one kept while a savepoint after it rolls back.
      store.transaction(() => {
        store.insertMessage(message('four and a half'))
        store.insertMessage(message('four and three quarters'))
      })
      expect(store.getSession(id)).toEqual(fresh())
      store.transaction(() => {
        store.insertMessage(message('kept'))
        expect(() => store.transaction(() => (store.insertMessage(message('undone')), fail()))).toThrow()
      })
      expect(store.getSession(id)).toEqual(fresh())
      // A rename in the same transaction as a message: the row is read again, with both.
      store.transaction(() => {
        store.insertMessage(message('before the rename'))
        store.updateSession(id, { title: 'Renamed' })
      })
      expect(store.getSession(id)).toEqual(fresh())
      expect(store.getSession(id)?.title).toBe('Renamed')
      store.insertMessage(message('five'))
      expect(store.getSession(id)).toEqual(fresh())
      expect(store.getSession(id)?.updated_at).toBe(t)
      // What is kept cannot be changed by a caller.
      expect(() => ((store.getSession(id) as { last_seq: number }).last_seq = 0)).toThrow()
      // Served from the kept row, not read again: a title written behind the store's back (which
      // nothing does in the app) is not seen after a message, inside a transaction or not.
      const behind = (title: string) => {
        const w = new Database(join(rt.dataDir, 'arbor.db'))
        w.prepare('UPDATE sessions SET title = ? WHERE session_id = ?').run(title, id)
        w.close()
      }
      store.insertMessage(message('six'))
      behind('behind one')
      expect(store.getSession(id)?.title).toBe('Renamed')
      store.transaction(() => store.insertMessage(message('seven')))
      behind('behind two')
      expect(store.getSession(id)?.title).toBe('Renamed')
      expect(store.getSession(id)?.last_seq).toBe(fresh().last_seq)

      // A checkpoint moves the head: the kept row takes it (a rolled-back one leaves it as it was).
      const checkpoint = () => {
        const head = store.get_session_head(id)!
        const { title, model, security, env, plugins, context_from_seq, visible_from_seq } =
          store.getSession(id)!
        return store.commit_session_snapshot({
          session_id: id,
          expected_snapshot_id: head.snapshot_id,
          head_seq: head.head_seq,
          reason: 'manual',
          state: { title, model, security, env, plugins, context_from_seq, visible_from_seq },
        })
      }
      behind('Renamed')
      const snap = checkpoint()
      expect(store.getSession(id)).toEqual(fresh())
      expect(store.getSession(id)?.head_snapshot_id).toBe(snap.snapshot_id)
      expect(() => store.transaction(() => (checkpoint(), fail()))).toThrow('rolled back')
      expect(store.getSession(id)).toEqual(fresh())
      store.transaction(() => (store.insertMessage(message('eight')), checkpoint()))
      expect(store.getSession(id)).toEqual(fresh())
      // Kept, not read again after the checkpoint.
      checkpoint()
      behind('behind three')
      expect(store.getSession(id)?.title).toBe('Renamed')
      expect(() => ((store.getSession(id) as { head_snapshot_id: string }).head_snapshot_id = '')).toThrow()
    } finally {
      raw.close()
    }
  })
})

describe('message ids already taken', () => {
  it('names exactly those of the given ids some message has, in any session', async () => {
    const rt = sqliteRuntime()
    const a = await rt.sessions.create()
    const b = await rt.sessions.create()
    await (
      await a.prompt({ query: 'one' })
    ).finished
    await (
      await b.prompt({ query: 'two' })
    ).finished
    const mine = [...(await a.messages({ limit: 10 })).items, ...(await b.messages({ limit: 10 })).items].map(
      (m) => m.message_id,
    )
    expect(mine.length).toBe(4)
    const free = [newId('msg'), newId('msg')]
    expect(rt.store.messageIdsTaken([free[0]!, ...mine, free[1]!])).toEqual(new Set(mine))
    expect(rt.store.messageIdsTaken(free)).toEqual(new Set())
    expect(rt.store.messageIdsTaken([])).toEqual(new Set())
    // An id that is not one of Arbor's is only not taken.
    expect(rt.store.messageIdsTaken(['"); DROP TABLE messages; --', ''])).toEqual(new Set())
    expect(rt.store.messageIdsTaken([mine[0]!])).toEqual(new Set([mine[0]]))
  })
})

function fail(): never {
  throw new Error('rolled back')
}
