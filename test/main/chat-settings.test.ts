import { describe, expect, it } from 'vitest'
import { openRuntime } from '../../src-main/runtime'
import { allMessages, recordingModel, sqliteRuntime, tempDir, textOf } from './helpers'

describe("a chat's instructions", () => {
  it('go first in the system prompt of every request, are recorded as an Action line, and forks keep them', async () => {
    const { model, requests } = recordingModel()
    const rt = sqliteRuntime({ models: [model] })
    const s = await rt.sessions.create()
    await s.set({ model: model.id })
    await s.set({ env: { instructions: '  Answer in French.  ' } })
    await (
      await s.prompt({ query: 'hello' })
    ).finished
    const system = requests.at(-1)!.system
    expect(system.startsWith('Instructions for this chat, from the user:\nAnswer in French.')).toBe(true)
    expect((await s.system()).system_prompt).toBe(system)
    expect((await s.get_info()).env.instructions).toBe('Answer in French.')
    const actions = (await allMessages(s)).filter((m) => m.kind === 'action').map(textOf)
    expect(actions).toContain('Instructions for this chat updated')
    // Setting the same text again records nothing; other env keys keep their own line.
    await s.set({ env: { instructions: 'Answer in French.' } })
    expect((await allMessages(s)).filter((m) => m.kind === 'action').length).toBe(actions.length)

    const child = await s.fork()
    expect((await child.get_info()).env.instructions).toBe('Answer in French.')

    // Empty removes them: the key goes and the prompt has no such section.
    await s.set({ env: { instructions: '   ' } })
    await (
      await s.prompt({ query: 'again' })
    ).finished
    expect((await s.get_info()).env.instructions).toBeUndefined()
    expect(requests.at(-1)!.system).not.toContain('Instructions for this chat')
    expect((await allMessages(s)).map(textOf)).toContain('Instructions for this chat removed')
  })

  it('too long instructions are refused with the limit, and nothing changes', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await expect(s.set({ env: { instructions: 'x'.repeat(20_001) } })).rejects.toThrow(/instructions/)
    expect((await s.get_info()).env.instructions).toBeUndefined()
  })
})

describe('each reply', () => {
  it('keeps the model that wrote it and its token usage, across a restart', async () => {
    const dir = tempDir()
    const first = openRuntime({ dataDir: dir, log: () => {} })
    const s = await first.sessions.create()
    await (
      await s.prompt({ query: 'count my tokens' })
    ).finished
    const live = (await allMessages(s)).find((m) => m.role === 'assistant')!
    expect(live.model).toBe((await s.get_info()).model)
    expect(live.usage!.input_tokens).toBeGreaterThan(0)
    expect(live.usage!.output_tokens).toBeGreaterThan(0)
    // The user's own message carries neither.
    expect((await allMessages(s)).find((m) => m.role === 'user')).not.toHaveProperty('usage')
    await first.close()

    const again = openRuntime({ dataDir: dir, log: () => {} })
    try {
      const reread = (await allMessages(await again.sessions.get(s.session_id))).find(
        (m) => m.role === 'assistant',
      )!
      expect(reread.model).toBe(live.model)
      expect(reread.usage).toEqual(live.usage)
      // The turn's totals are the sum of its replies.
      const budget = (await (await again.sessions.get(s.session_id)).inspect()).budget
      expect(budget.input_tokens).toBe(live.usage!.input_tokens)
    } finally {
      await again.close()
    }
  })
})
