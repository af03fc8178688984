import { ArborError } from '../../src-shared/errors'
import type { ForkRequest, Session } from '../../src-shared/sdk/api'
import { parseRequest, type Method, type ParsedRequestOf } from '../../src-shared/schemas'
import type { SessionCore } from './session'

/**
 * The seed's `Session` over one core: every call async (a refusal is a rejected promise, never
 * a synchronous throw), argument shapes as the seed documents them, each validated with the
 * same schema the router uses — the same call is refused the same way locally and remotely.
 */
export function sessionFacade(
  core: SessionCore,
  registry: { ensureOpen(): void; fork(id: string, req: ForkRequest): Session },
): Session {
  const id = core.id
  /** Parses a call's arguments (as the wire would carry them) once the runtime is known open. */
  const args = <M extends Method>(method: M, params: object = {}): ParsedRequestOf<M> => {
    registry.ensureOpen()
    // A request the router parsed for this session is not parsed again.
    if ((params as { session_id?: unknown } | null)?.session_id === id) return parseRequest(method, params)
    return parseRequest(method, { ...params, session_id: id })
  }
  return Object.freeze({
    session_id: id,
    messages: async (opts = {}) => core.messages(args('session.messages', opts)),
    get_info: async () => (args('session.get_info'), core.info()),
    subscribe: (listener) => {
      registry.ensureOpen()
      return core.subscribe(listener)
    },
    async prompt(req) {
      if (!req || typeof req !== 'object')
        throw new ArborError('invalid_request', 'prompt() takes an object: prompt({ query: "…" }).')
      const { query, attachments } = args('session.prompt', req)
      const { id: turn_id, command_id, finished } = core.prompt(query, attachments)
      return { id: turn_id, command_id, finished }
    },
    turn: async (turn_id) => core.turnHandle(args('session.turn', { turn_id }).turn_id),
    interactions: async () => (args('session.interactions'), core.interactions()),
    respond: async (req) => {
      const { session_id: _id, ...answer } = args('session.respond', req)
      return core.respond(answer)
    },
    stop: async () => (args('session.stop'), core.stop()),
    steer: async (text) => core.steer(args('session.steer', { text }).text),
    pause: async () => (args('session.pause'), core.pause()),
    run: async (opts = {}) => core.run(args('session.run', opts).steering),
    unqueue: async (command_id) => core.unqueue(args('session.unqueue', { command_id }).command_id),
    set: async (changes) => {
      const { session_id: _id, ...checked } = args('session.set', changes)
      return core.set(checked)
    },
    compact: async () => (args('session.compact'), core.compact()),
    fork: async (req = {}) => {
      const { session_id: _id, ...checked } = args('session.fork', req)
      return registry.fork(id, checked)
    },
    snapshot: async () => (args('session.snapshot'), core.snapshot()),
    snapshots: async (opts = {}) => core.snapshots(args('session.snapshots', opts).limit ?? 200),
    syncshot: async () => (args('session.syncshot'), core.syncshot()),
    status: async () => (args('session.status'), core.status()),
    inspect: async () => (args('session.inspect'), core.inspect()),
    system: async () => (args('session.system'), core.system()),
    capabilities: async () => (args('session.capabilities'), core.capabilities()),
    head: async () => (args('session.head'), core.head()),
  } satisfies Session)
}
