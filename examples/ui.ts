import type { InteractionPart, SessionMessage, SessionMutation } from '../src-shared/types'

/**
 * The four functions the seed's example calls, for a terminal: the reply streams to stdout as
 * its deltas arrive; everything else is one line each.
 */
export function exampleUi() {
  const write = (s: string) => process.stdout.write(s)
  return {
    render_messages(items: SessionMessage[]) {
      write(`history: ${items.length} message${items.length === 1 ? '' : 's'}\n`)
    },
    apply_mutation_to_ui(mutation: SessionMutation) {
      if (mutation.variant === 'delta' && mutation.field === 'text') write(mutation.text)
      else if (mutation.variant === 'message' && mutation.message.role === 'user')
        write(`\n> ${mutation.message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')}\n`)
    },
    render_interaction(part: InteractionPart) {
      write(`\n[${part.kind}] ${part.description ?? part.question ?? part.tool_name ?? ''}\n`)
    },
    set_turn_status(turn_id: string, status: 'completed' | 'failed') {
      write(`\nturn ${turn_id} ${status}\n`)
    },
  }
}
