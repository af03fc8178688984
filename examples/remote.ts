/**
 * The same seed example, run as written against a running Arbor over its WebSocket
 * (`connectArbor()`): start `npm run serve`, then
 *
 *   node out/main/example-remote.js http://127.0.0.1:PORT/?token=TOKEN
 *
 * (the address serve printed; `--url ws://127.0.0.1:PORT --token TOKEN` works too).
 */
import WebSocket from 'ws'
import { connectArbor } from '../src-shared/sdk'
import { exampleUi } from './ui'

async function main(): Promise<void> {
  const { url, token } = address()
  const agent = await connectArbor({ url, token, WebSocket })
  // The host owns model choice; a remote client may still pick one of the host's model ids.
  const model = 'scripted'
  const { render_messages, apply_mutation_to_ui, render_interaction, set_turn_status } = exampleUi()
  try {
    // ---- the seed's example, unchanged but for the model -------------------------------
    const session = await agent.sessions.create({
      session_id: `repo-analysis-${Date.now().toString(36)}`,
    })
    await session.set({ model })
    const initial_page = await session.messages()
    render_messages(initial_page.items)
    const unsubscribe = session.subscribe((mutation) => {
      apply_mutation_to_ui(mutation)
      if (
        mutation.variant === 'part' &&
        mutation.type === 'interaction' &&
        mutation.part.status === 'pending'
      ) {
        render_interaction(mutation.part)
      }
    })
    const turn = await session.prompt({ query: 'Analyse the Session design of this repository' })
    const result = await turn.finished
    set_turn_status(turn.id, result.success ? 'completed' : 'failed')
    unsubscribe()
    // --------------------------------------------------------------------------------------
    process.exitCode = result.success ? 0 : 1
  } finally {
    await agent.close()
  }
}

/** `node example-remote.js URL` (as serve prints it) or `--url U --token T`. */
function address(): { url: string; token: string } {
  const flag = (f: string) => {
    const i = process.argv.indexOf(f)
    return i >= 0 ? process.argv[i + 1] : undefined
  }
  const printed = process.argv.slice(2).find((a) => /^(https?|wss?):\/\//.test(a))
  const url = flag('--url') ?? printed ?? process.env.ARBOR_URL
  const token =
    flag('--token') ?? (url ? new URL(url).searchParams.get('token') : null) ?? process.env.ARBOR_TOKEN
  if (!url || !token)
    throw new Error(
      'Usage: node out/main/example-remote.js http://127.0.0.1:PORT/?token=TOKEN (as npm run serve printed it)',
    )
  return { url: url.replace(/\?.*$/, ''), token }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err))
  process.exitCode = 1
})
