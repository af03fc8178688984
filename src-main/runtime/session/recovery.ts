import type { ArborErrorShape } from '../../../src-shared/errors'
import type { TurnResult } from '../../../src-shared/types'
import type { TurnRow } from '../../store'
import { activeTurn, FINISHED, now, type ActiveTurn, type SessionContext } from './context'
import { cancelAll } from './interactions'
import { textOf, type MessageLog } from './log'

const INTERRUPTED: ArborErrorShape = {
  code: 'interrupted',
  message:
    'This turn was interrupted because Arbor stopped while it was running. Its partial output is kept; send the prompt again to retry.',
}
const INTERRUPTED_CALL = 'Interrupted: Arbor stopped while this call was in progress.'

/**
 * After a restart: a turn that was running is ended as interrupted (one transaction each);
 * a turn that was waiting for an answer or paused is re-attached — it is returned, to become
 * the session's active turn. Each step is one transaction or idempotent, so a crash during
 * recovery leaves work the next start finishes.
 */
export function recover(ctx: SessionContext, log: MessageLog): ActiveTurn | null {
  const { store } = ctx
  for (const cmd of store.listCommands(ctx.id, ['active'])) {
    const turn = cmd.turn_id ? store.getTurn(cmd.turn_id) : undefined
    // A set / compact / steer commits with its command, so an active one has not happened yet.
    if (cmd.kind !== 'prompt') store.setCommandStatus(cmd.command_id, 'queued')
    else if (turn && FINISHED.includes(turn.status)) store.setCommandStatus(cmd.command_id, 'done')
  }
  let attached: ActiveTurn | null = null
  for (const turn of store.listTurns(ctx.id, ['running', 'waiting', 'paused'])) {
    if (turn.status === 'running' || attached) interrupt(ctx, log, turn)
    else attached = activeTurn(turn, true)
  }
  return attached
}

/** Ends a turn that a crash cut short: its messages settled, one error message, the turn ended. */
function interrupt(ctx: SessionContext, log: MessageLog, turn: TurnRow): void {
  ctx.store.transaction(() => {
    cancelAll(ctx, log, turn.turn_id, { status: 'error', error: INTERRUPTED_CALL })
    for (const m of log.turnMessages(turn.turn_id)) {
      let changed = m.status === 'streaming'
      if (changed) m.status = 'interrupted'
      m.parts = m.parts.map((p) => {
        if (
          p.type === 'tool_call' &&
          ['streaming_input', 'approved', 'running', 'pending_approval'].includes(p.status)
        ) {
          changed = true
          return { ...p, status: 'error' as const, error: INTERRUPTED_CALL }
        }
        return p
      })
      if (changed) log.update(m)
    }
    log.insert(textOf('assistant', 'error', INTERRUPTED.message, turn.turn_id, 'interrupted'))
    const result: TurnResult = { success: false, error: INTERRUPTED }
    ctx.store.saveTurn({ ...turn, status: 'interrupted', result, updated_at: now() })
    if (turn.command_id) ctx.store.setCommandStatus(turn.command_id, 'done')
  })
}
