/**
 * The seed's "complete local example", run as written against Arbor's own runtime in this
 * process (`openRuntime()`): create → messages() → subscribe() → prompt({ query }) → await
 * turn.finished.
 *
 *   npm run build && node out/main/example-local.js [--data-dir DIR]
 *
 * Without --data-dir (or ARBOR_DATA_DIR) it uses a throwaway in-memory store.
 */
import { openRuntime } from '../src-main/runtime'
import { SCRIPTED_MODEL_ID } from '../src-main/runtime/models/scripted'
import { exampleUi } from './ui'

async function main(): Promise<void> {
  const dataDir = argValue('--data-dir') ?? process.env.ARBOR_DATA_DIR
  const agent = openRuntime(dataDir ? { dataDir } : { store: 'memory' })
  // The model is the host's to choose; here the scripted offline model, so no network is needed.
  const model = SCRIPTED_MODEL_ID
  const { render_messages, apply_mutation_to_ui, render_interaction, set_turn_status } = exampleUi()
  try {
    // ---- the seed's example, unchanged but for the model -------------------------------
    const session = await agent.sessions.create({
      session_id: 'repo-analysis',
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

function argValue(flag: string): string | undefined {
  const i = process.argv.indexOf(flag)
  return i >= 0 ? process.argv[i + 1] : undefined
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err))
  process.exitCode = 1
})
