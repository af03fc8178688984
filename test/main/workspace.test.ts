import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createRouter, type Peer } from '../../src-main/ipc/router'
import { appInfo } from '../../src-main/app-info'
import type { Session } from '../../src-main/runtime'
import { inspectWorkspace } from '../../src-main/runtime/workspace'
import type { InteractionPart } from '../../src-shared/types'
import { eventually, nextPendingInteraction, record, refusal, sqliteRuntime, tempDir } from './helpers'

const write = (path: string, content: string) => `/tool write_file ${JSON.stringify({ path, content })}`
const peer: Peer = { id: 'wc-7', send: () => {} }

/** Prompts a write and answers its approval; returns the approval as it was shown. */
async function approvedWrite(s: Session, path: string, content: string): Promise<InteractionPart> {
  const rec = record(s)
  const turn = await s.prompt({ query: write(path, content) })
  const part = await nextPendingInteraction(rec)
  await s.respond({ interaction_id: part.interaction_id, decision: 'approve' })
  expect(await turn.finished).toEqual({ success: true })
  return part
}

describe('a workspace folder is checked, and says what is wrong', () => {
  it('refuses a relative path, a missing folder and a file, and accepts a folder as its real path', () => {
    const dir = tempDir()
    const file = join(dir, 'notes.txt')
    writeFileSync(file, 'x')
    expect(inspectWorkspace('projects/site')).toMatchObject({ ok: false, problem: 'relative' })
    expect(inspectWorkspace('projects/site').message).toMatch(/not a full path/)
    expect(inspectWorkspace(join(dir, 'missing'))).toMatchObject({ ok: false, problem: 'missing' })
    expect(inspectWorkspace(join(dir, 'missing')).message).toMatch(/does not exist\. Create it/)
    expect(inspectWorkspace(file)).toMatchObject({ ok: false, problem: 'not_a_folder' })
    expect(inspectWorkspace('/')).toMatchObject({ ok: false, problem: 'forbidden' })
    expect(inspectWorkspace(`${dir}/`)).toEqual({
      ok: true,
      path: realpathSync(dir),
      message: expect.stringContaining('can work in') as string,
    })
  })

  it('creates a missing folder when asked to', () => {
    const target = join(tempDir(), 'new', 'project')
    expect(inspectWorkspace(target, true)).toMatchObject({ ok: true, path: realpathSync(target) })
    expect(existsSync(target)).toBe(true)
  })

  it.skipIf(process.getuid?.() === 0)('refuses a folder it cannot write in', () => {
    const dir = join(tempDir(), 'locked')
    mkdirSync(dir)
    chmodSync(dir, 0o500)
    try {
      expect(inspectWorkspace(dir)).toMatchObject({ ok: false, problem: 'not_writable' })
    } finally {
      chmodSync(dir, 0o700)
    }
  })

  it('is served as workspace.check, and the folder dialog only where the host has one', async () => {
    const runtime = sqliteRuntime()
    const browser = createRouter(runtime, appInfo(runtime, 'browser'))
    expect(await browser.handle('workspace.check', { path: 'rel' }, peer)).toMatchObject({
      ok: true,
      data: { ok: false, problem: 'relative' },
    })
    expect(await browser.handle('app.pick_folder', {}, peer)).toEqual({
      ok: true,
      data: { supported: false, path: null },
    })
    const asked: string[] = []
    const electron = createRouter(runtime, appInfo(runtime, 'electron'), {
      pickFolder: async (p, opts) => {
        asked.push(`${p.id}: ${opts.title}`)
        return '/picked/folder'
      },
    })
    expect(await electron.handle('app.pick_folder', { title: 'Folder for this chat' }, peer)).toEqual({
      ok: true,
      data: { supported: true, path: '/picked/folder' },
    })
    expect(asked).toEqual(['wc-7: Folder for this chat'])
  })
})

describe('the default folder for new chats', () => {
  it('is refused when it is not a usable folder, and nothing is saved', () => {
    const runtime = sqliteRuntime()
    const file = join(tempDir(), 'f.txt')
    writeFileSync(file, 'x')
    for (const bad of ['relative/dir', join(tempDir(), 'missing'), file])
      expect(() => runtime.updateSettings({ default_workspace: bad })).toThrow(/Workspace: /)
    expect(runtime.settings().default_workspace).toBeUndefined()
  })

  it('is where a new chat works, until it is cleared', async () => {
    const runtime = sqliteRuntime()
    const dir = tempDir()
    expect(runtime.updateSettings({ default_workspace: dir }).default_workspace).toBe(realpathSync(dir))
    const s = await runtime.sessions.create()
    expect((await s.get_info()).env.workspace).toBe(realpathSync(dir))
    await approvedWrite(s, 'hello.txt', 'from the default folder')
    expect(readFileSync(join(dir, 'hello.txt'), 'utf8')).toBe('from the default folder')

    runtime.updateSettings({ default_workspace: null })
    const own = await runtime.sessions.create()
    expect((await own.get_info()).env.workspace).toBe(join(runtime.dataDir, 'workspaces', own.session_id))
  })
})

describe('a chat’s folder', () => {
  it('changes through set({ env }) and then write_file writes there', async () => {
    const runtime = sqliteRuntime()
    const s = await runtime.sessions.create()
    const chosen = tempDir()
    await expect(s.set({ env: { workspace: 'not/absolute' } })).rejects.toThrow(/not a full path/)
    await s.set({ env: { workspace: chosen } })
    await eventually(
      async () => (await s.get_info()).env.workspace === realpathSync(chosen),
      'the new folder',
    )
    const part = await approvedWrite(s, 'moved.txt', 'here')
    expect(part.workspace).toBe(realpathSync(chosen))
    expect(readFileSync(join(chosen, 'moved.txt'), 'utf8')).toBe('here')
    expect(existsSync(join(runtime.dataDir, 'workspaces', s.session_id, 'moved.txt'))).toBe(false)
  })

  it('is inherited by a fork, also when the parent has a folder of its own', async () => {
    const runtime = sqliteRuntime()
    const parent = await runtime.sessions.create()
    await approvedWrite(parent, 'a.txt', 'made by the parent')
    const child = await parent.fork({})
    expect((await child.get_info()).env.workspace).toBe((await parent.get_info()).env.workspace)
    const chosen = tempDir()
    await parent.set({ env: { workspace: chosen } })
    await eventually(async () => (await parent.get_info()).env.workspace === realpathSync(chosen), 'moved')
    expect((await (await parent.fork({})).get_info()).env.workspace).toBe(realpathSync(chosen))
  })
})

describe('a write_file approval carries what its card shows', () => {
  it('the absolute path, whether the file exists and its current text, kept across a restart', async () => {
    const dataDir = tempDir()
    const runtime = sqliteRuntime({ dataDir })
    const s = await runtime.sessions.create()
    const dir = (await s.get_info()).env.workspace!
    const first = await approvedWrite(s, 'notes.txt', 'one\ntwo\n')
    expect(first.workspace).toBe(dir)
    expect(first.file).toEqual({ path: join(realpathSync(dir), 'notes.txt'), exists: false })

    const rec = record(s)
    await s.prompt({ query: write('notes.txt', 'one\nthree\n') })
    const second = await nextPendingInteraction(rec)
    expect(second.file).toEqual({
      path: join(realpathSync(dir), 'notes.txt'),
      exists: true,
      bytes: 8,
      before: 'one\ntwo\n',
    })
    await runtime.close()

    const again = sqliteRuntime({ dataDir })
    const [waiting] = await (await again.sessions.get(s.session_id)).interactions()
    expect(waiting!.part.file?.before).toBe('one\ntwo\n')
    expect(waiting!.part.workspace).toBe(dir)
  })

  it('no current text for a binary or a large file, saying why', async () => {
    const runtime = sqliteRuntime()
    const s = await runtime.sessions.create()
    const dir = (await s.get_info()).env.workspace!
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'img.bin'), Buffer.from([1, 0, 2]))
    writeFileSync(join(dir, 'big.txt'), 'x'.repeat(300 * 1024))
    for (const [name, why] of [
      ['img.bin', 'binary'],
      ['big.txt', 'too_large'],
    ] as const) {
      const rec = record(s)
      await s.prompt({ query: write(name, 'new') })
      const part = await nextPendingInteraction(rec)
      expect(part.file).toMatchObject({ exists: true, before_omitted: why })
      expect(part.file?.before).toBeUndefined()
      await s.respond({ interaction_id: part.interaction_id, decision: 'deny' })
      await eventually(async () => (await s.status()).state === 'idle', 'idle')
    }
  })

  it('an escaping path gets no preview (the write itself is refused)', async () => {
    const runtime = sqliteRuntime()
    const s = await runtime.sessions.create()
    const rec = record(s)
    await s.prompt({ query: write('../outside.txt', 'x') })
    const part = await nextPendingInteraction(rec)
    expect(part.file).toBeUndefined()
    expect(part.workspace).toBe((await s.get_info()).env.workspace)
    expect(await refusal(() => s.respond({ interaction_id: 'int_nope', decision: 'approve' }))).toMatchObject(
      {
        code: 'not_found',
      },
    )
  })
})
