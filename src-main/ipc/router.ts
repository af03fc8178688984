import type { z } from 'zod'
import type { AppInfo, ResponseOf } from '../../src-shared/contract'
import { ArborError, toErrorShape, type Result } from '../../src-shared/errors'
import { schemas, type Method, type ParsedRequestOf } from '../../src-shared/schemas'
import type { ServerEvent } from '../../src-shared/types'
import { PROVIDER_PRESETS, type Runtime } from '../runtime'

/**
 * One client of the router: a browser tab over the WebSocket, or an Electron window.
 * `send` delivers events built by main (trusted, never re-parsed).
 */
export interface Peer {
  id: string
  send(event: ServerEvent): void
}

type Handler<M extends Method> = (
  req: ParsedRequestOf<M>,
  peer: Peer,
) => ResponseOf<M> | Promise<ResponseOf<M>>
type Handlers = { [M in Method]: Handler<M> }

export interface Router {
  /** Validates and dispatches one untrusted request; never throws. */
  handle(method: unknown, params: unknown, peer: Peer): Promise<Result<unknown>>
  /** Drops a peer's subscriptions (its window closed, its socket dropped). */
  disconnect(peer: Peer): void
}

export function describeZodError(method: string, error: z.ZodError): string {
  const issues = error.issues.slice(0, 5).map((i) => {
    const where = i.path.length ? i.path.join('.') : 'params'
    return `${where}: ${i.message}`
  })
  return `Invalid request for ${method} — ${issues.join('; ')}.`
}

/** What only the host can do (Electron can open a folder; a browser host cannot). */
export interface HostActions {
  revealDataDir?(path: string): Promise<void>
}

export function createRouter(runtime: Runtime, appInfo: () => AppInfo, host: HostActions = {}): Router {
  // peer id → session id → unsubscribe
  const subscriptions = new Map<string, Map<string, () => void>>()
  const peers = new Map<string, Peer>()
  const s = (id: string) => runtime.sessions.get(id)

  const broadcast = (event: ServerEvent) => {
    for (const peer of peers.values()) peer.send(event)
  }
  runtime.onSessionsChanged(() => broadcast({ type: 'sessions_changed' }))
  /** Every window shows the same settings, theme and model list. */
  const settingsChanged = <T>(result: T): T => {
    broadcast({ type: 'settings_changed' })
    return result
  }

  const handlers: Handlers = {
    'app.info': () => appInfo(),
    'app.reveal_data_dir': async () => {
      if (!host.revealDataDir) return { revealed: false, path: runtime.dataDir }
      await host.revealDataDir(runtime.dataDir)
      return { revealed: true, path: runtime.dataDir }
    },
    'sessions.create': (r) => runtime.sessions.create(r).info(),
    'sessions.get': (r) => s(r.session_id).info(),
    'sessions.list': (r) => runtime.sessions.list(r),
    'sessions.archive': (r) => runtime.sessions.archive(r.session_id, r.archived ?? true),
    'sessions.archived': () => runtime.sessions.archived(),
    'sessions.clean_archive': () => runtime.sessions.clean_archive(),
    'sessions.remove': (r) => runtime.sessions.remove(r.session_id),
    'sessions.clear_messages': (r) => runtime.sessions.clear_messages(r.session_id),
    'sessions.rename': (r) => runtime.sessions.rename(r.session_id, r.title),
    'sessions.search': (r) => runtime.sessions.search(r.query, r.limit),
    'settings.get': () => runtime.settings(),
    'settings.set': (r) => settingsChanged(runtime.updateSettings(r)),
    'providers.list': () => ({
      providers: runtime.providers.list(),
      presets: PROVIDER_PRESETS,
      secret_storage: runtime.secrets.description,
    }),
    'providers.save': (r) => {
      const saved = runtime.providers.save(r)
      runtime.refreshModels()
      return settingsChanged(saved)
    },
    'providers.remove': (r) => {
      runtime.providers.remove(r.provider_id)
      runtime.refreshModels()
      return settingsChanged({ removed: true as const })
    },
    'providers.test': (r) => runtime.providers.test(r.provider_id),
    'mcp.list': () => runtime.mcp.list(),
    'mcp.save': async (r) => settingsChanged(await runtime.mcp.save(r)),
    'mcp.remove': async (r) => {
      await runtime.mcp.remove(r.server_id)
      return settingsChanged({ removed: true as const })
    },
    'mcp.tools': (r) => runtime.mcp.toolInfos(r.server_id),
    'session.messages': (r) => s(r.session_id).messages(r),
    'session.get_info': (r) => s(r.session_id).info(),
    'session.subscribe': (r, peer) => {
      const session = s(r.session_id)
      const mine = subscriptions.get(peer.id) ?? new Map<string, () => void>()
      subscriptions.set(peer.id, mine)
      if (!mine.has(r.session_id))
        mine.set(
          r.session_id,
          session.subscribe((mutation) => peer.send({ type: 'mutation', mutation })),
        )
      return { subscribed: true }
    },
    'session.unsubscribe': (r, peer) => {
      subscriptions.get(peer.id)?.get(r.session_id)?.()
      subscriptions.get(peer.id)?.delete(r.session_id)
      return { subscribed: false }
    },
    'session.prompt': (r) => {
      const { id, command_id } = s(r.session_id).prompt(r.query)
      return { id, command_id }
    },
    'session.wait_turn': (r) => s(r.session_id).waitTurn(r.turn_id),
    'session.status': (r) => s(r.session_id).status(),
    'session.stop': (r) => s(r.session_id).stop(),
    'session.interactions': (r) => s(r.session_id).interactions(),
    'session.respond': (r) => {
      const { session_id: _sid, ...rest } = r
      return s(r.session_id).respond(rest)
    },
    'session.steer': (r) => s(r.session_id).steer(r.text),
    'session.pause': (r) => s(r.session_id).pause(),
    'session.run': (r) => s(r.session_id).run(r.steering),
    'session.unqueue': (r) => s(r.session_id).unqueue(r.command_id),
    'session.set': (r) => {
      const { session_id: _sid, ...changes } = r
      return s(r.session_id).set(changes)
    },
    'session.compact': (r) => s(r.session_id).compact(),
    'session.fork': (r) => {
      const { session_id, ...req } = r
      return runtime.sessions.fork(session_id, req).info()
    },
    'session.head': (r) => s(r.session_id).head(),
    'session.snapshot': (r) => s(r.session_id).snapshot(),
    'session.snapshots': (r) => s(r.session_id).snapshots(r.limit ?? 200),
    'session.syncshot': (r) => s(r.session_id).syncshot(),
    'session.inspect': (r) => s(r.session_id).inspect(),
    'session.system': (r) => s(r.session_id).system(),
    'session.capabilities': (r) => s(r.session_id).capabilities(),
  }

  return {
    async handle(method, params, peer) {
      peers.set(peer.id, peer)
      try {
        if (typeof method !== 'string' || !Object.hasOwn(schemas, method))
          throw new ArborError(
            'unknown_method',
            `Unknown method ${JSON.stringify(method)}. Known methods: ${Object.keys(schemas).join(', ')}.`,
          )
        const m = method as Method
        const parsed = schemas[m].safeParse(params ?? {})
        if (!parsed.success) throw new ArborError('invalid_request', describeZodError(m, parsed.error))
        const handler = handlers[m] as Handler<Method>
        return { ok: true, data: await handler(parsed.data as never, peer) }
      } catch (err) {
        return { ok: false, error: toErrorShape(err) }
      }
    },
    disconnect(peer) {
      for (const unsubscribe of subscriptions.get(peer.id)?.values() ?? []) unsubscribe()
      subscriptions.delete(peer.id)
      peers.delete(peer.id)
    },
  }
}
