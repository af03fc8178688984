/**
 * MCP tools through the official SDK, against the real reference filesystem server from npm
 * (@modelcontextprotocol/server-filesystem), started over stdio by the test.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SessionMessage, ToolCallPart } from '../../src-shared/types'
import { allMessages, record, sqliteRuntime, tempDir } from './helpers'

const FS_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')

function setup(timeouts = { connect_ms: 20_000, call_ms: 20_000 }) {
  const rt = sqliteRuntime({ mcp_timeouts: timeouts })
  const shared = tempDir()
  writeFileSync(join(shared, 'hello.txt'), 'hello from the filesystem server')
  return { rt, shared }
}

const calls = (msgs: SessionMessage[]) =>
  msgs.flatMap((m) => m.parts.filter((p): p is ToolCallPart => p.type === 'tool_call'))

describe('MCP servers over stdio', () => {
  it('lists the tools of a real server with their annotations', async () => {
    const { rt, shared } = setup()
    const server = await rt.mcp.save({
      name: 'fs',
      command: process.execPath,
      args: [FS_SERVER, shared],
      share_roots: false,
    })
    expect(server).toMatchObject({ server_id: 'fs', status: 'not_started', enabled_by_default: true })
    const tools = await rt.mcp.toolInfos('fs')
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    expect(byName.read_text_file).toMatchObject({ qualified_name: 'mcp_fs_read_text_file', read_only: true })
    expect(byName.write_file).toMatchObject({ read_only: false, destructive: true })
    expect(rt.mcp.list()[0]!.status).toBe('running')
  })

  it('gates MCP calls like built-in ones: read-only runs in auto_read, a write asks first', async () => {
    const { rt, shared } = setup()
    await rt.mcp.save({
      name: 'fs',
      command: process.execPath,
      args: [FS_SERVER, shared],
      share_roots: false,
    })
    const s = await rt.sessions.create()
    expect((await s.get_info()).plugins).toEqual(['fs'])
    await s.set({ security: 'auto_read' })
    const read = await (
      await s.prompt({
        query: `/tool mcp_fs_read_text_file {"path":${JSON.stringify(join(shared, 'hello.txt'))}}`,
      })
    ).finished
    expect(read).toEqual({ success: true })
    expect(calls(await allMessages(s))[0]).toMatchObject({
      status: 'done',
      output: { content: 'hello from the filesystem server' },
    })
    expect(await s.interactions()).toEqual([])

    const rec = record(s)
    const target = join(shared, 'new.txt')
    const write = await s.prompt({
      query: `/tool mcp_fs_write_file {"path":${JSON.stringify(target)},"content":"written via MCP"}`,
    })
    await rec.until((seen) =>
      seen.some((m) => m.variant === 'part' && m.part.type === 'interaction' && m.part.status === 'pending'),
    )
    const [pending] = await s.interactions()
    expect(pending!.part).toMatchObject({ tool_name: 'mcp_fs_write_file', kind: 'approval' })
    expect(pending!.part.description).toMatch(/MCP server "fs".*may change or delete/)
    await s.respond({ interaction_id: pending!.interaction_id, decision: 'approve', remember: 'session' })
    expect(await write.finished).toEqual({ success: true })
    expect(readFileSync(target, 'utf8')).toBe('written via MCP')
  })

  it('a tool that fails, or invalid arguments from the model, become error results the model sees', async () => {
    const { rt, shared } = setup()
    await rt.mcp.save({
      name: 'fs',
      command: process.execPath,
      args: [FS_SERVER, shared],
      share_roots: false,
    })
    const s = await rt.sessions.create()
    await s.set({ security: 'auto' })
    await (
      await s.prompt({
        query: `/tool mcp_fs_read_text_file {"path":${JSON.stringify(join(shared, 'missing.txt'))}}`,
      })
    ).finished
    await (
      await s.prompt({ query: '/tool mcp_fs_read_text_file {"nope": 1}' })
    ).finished
    const [missing, invalid] = calls(await allMessages(s))
    expect(missing).toMatchObject({ status: 'error' })
    expect(missing!.error).toMatch(/read_text_file reported an error: .*(ENOENT|no such file)/i)
    expect(invalid).toMatchObject({ status: 'error', error: 'mcp_fs_read_text_file needs path.' })
    // The model saw both failures and the session still works.
    expect(await (await s.prompt({ query: 'still there?' })).finished).toEqual({ success: true })
  })

  it('a server that cannot start or dies is reported, and the session keeps working', async () => {
    const { rt, shared } = setup({ connect_ms: 3000, call_ms: 3000 })
    const script = join(tempDir(), 'dies.js')
    mkdirSync(shared, { recursive: true })
    writeFileSync(script, 'process.exit(3)')
    await rt.mcp.save({ name: 'broken', command: process.execPath, args: [script] })
    const s = await rt.sessions.create()
    expect(await (await s.prompt({ query: 'hello' })).finished).toEqual({ success: true })
    // Reported once in the chat, not at every turn, with the code the UI links to Settings.
    expect(await (await s.prompt({ query: 'and again' })).finished).toEqual({ success: true })
    expect(await (await s.prompt({ query: 'and again' })).finished).toEqual({ success: true })
    const notices = (await allMessages(s)).filter((m) => m.kind === 'action')
    expect(notices.map((m) => (m.parts[0] as { text: string }).text)).toEqual([
      expect.stringMatching(
        /The MCP server "broken" could not start, so its tools are unavailable in this chat: .* Fix it in Settings → MCP servers, or turn it off for this chat/,
      ),
    ])
    expect(notices[0]!.error_code).toBe('mcp_unavailable')
    expect(rt.mcp.list()[0]).toMatchObject({ status: 'failed' })
  })

  it('servers are switched per chat: one added later reaches an older chat once turned on there', async () => {
    const { rt, shared } = setup()
    const older = await rt.sessions.create()
    await rt.mcp.save({
      name: 'fs',
      command: process.execPath,
      args: [FS_SERVER, shared],
      share_roots: false,
    })
    expect((await older.get_info()).plugins).toEqual([])
    await older.set({ plugins: ['fs'], security: 'auto' })
    const query = `/tool mcp_fs_read_text_file {"path":${JSON.stringify(join(shared, 'hello.txt'))}}`
    expect(await (await older.prompt({ query })).finished).toEqual({ success: true })
    expect(calls(await allMessages(older)).at(-1)).toMatchObject({ status: 'done' })
    // Off again for this chat only: its tools are gone from it, a new chat still has them.
    await older.set({ plugins: [] })
    await (
      await older.prompt({ query })
    ).finished
    expect(calls(await allMessages(older)).at(-1)).toMatchObject({ status: 'error' })
    expect((await (await rt.sessions.create()).get_info()).plugins).toEqual(['fs'])
  })

  it('a server that hangs on a call times out into an error result', async () => {
    const { rt } = setup({ connect_ms: 5000, call_ms: 500 })
    const script = join(tempDir(), 'hangs.mjs')
    // A minimal stdio JSON-RPC peer that answers initialize and tools/list, then never answers calls.
    writeFileSync(
      script,
      `import { createInterface } from 'node:readline'
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n')
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line)
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hang', version: '1' } } })
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'wait', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }] } })
})`,
    )
    await rt.mcp.save({ name: 'hang', command: process.execPath, args: [script] })
    const s = await rt.sessions.create()
    await s.set({ security: 'auto' })
    await (
      await s.prompt({ query: '/tool mcp_hang_wait {}' })
    ).finished
    expect(calls(await allMessages(s))[0]).toMatchObject({ status: 'error' })
    expect(calls(await allMessages(s))[0]!.error).toMatch(/sent nothing for wait in 0.5 s/)
    expect(await (await s.prompt({ query: 'and now?' })).finished).toEqual({ success: true })
  })
})
