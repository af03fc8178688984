import { listPermissions, revokePermission } from '../runtime/permissions'
import { join } from 'node:path'
import { inspectWorkspace } from '../runtime/workspace'
import { TRANSFER_PART_CHARS } from '../../src-shared/limits'
import { Transfers } from './transfers'
import type { AppInfo, ResponseOf } from '../../src-shared/contract'
import { ArborError, toErrorShape, type Result } from '../../src-shared/errors'
import {
  describeZodError,
  parseRequest,
  schemas,
  type Method,
  type ParsedRequestOf,
} from '../../src-shared/schemas'
import type { ImportProgress, ServerEvent } from '../../src-shared/types'
import { PROVIDER_PRESETS, type Runtime, type Session } from '../runtime'

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

export { describeZodError }

/** What only the host can do (Electron can open a folder; a browser host cannot). */
export interface HostActions {
  revealDataDir?(path: string): Promise<void>
  /** The native folder dialog, over the caller's window; null when the user cancels it. */
  pickFolder?(peer: Peer, opts: { title?: string; default_path?: string }): Promise<string | null>
}

export function createRouter(runtime: Runtime, appInfo: () => AppInfo, host: HostActions = {}): Router {
  // peer id → session id → its subscription (claimed while the session is being looked up)
  type Subscription = { claim: symbol; unsubscribe: (() => void) | null }
  const subscriptions = new Map<string, Map<string, Subscription>>()
  const unsubscribe = (peer_id: string, session_id: string) => {
    subscriptions.get(peer_id)?.get(session_id)?.unsubscribe?.()
    subscriptions.get(peer_id)?.delete(session_id)
  }
  const peers = new Map<string, Peer>()
  /** Chat files crossing this router in pieces, per peer. */
  const transfers = new Transfers()
  const { sessions } = runtime
  const s = (id: string) => sessions.get(id)
  /** One call on one session: the wire's `session.x` maps to the API's `session.x()`. */
  const on = async <T>(id: string, fn: (session: Session) => Promise<T>): Promise<T> => fn(await s(id))

  const broadcast = (event: ServerEvent) => {
    for (const peer of peers.values()) peer.send(event)
  }
  // Lists follow every session's info as it changes; only a structural change (created,
  // forked, removed) also sends the older coarse `sessions_changed`.
  runtime.onSessionInfo((mutation) => {
    // A removed session's subscriptions end with it: a session created later under the same id
    // is subscribed to afresh.
    if (mutation.removed)
      for (const peer_id of subscriptions.keys()) unsubscribe(peer_id, mutation.session_id)
    broadcast({ type: 'sessions', mutation })
  })
  runtime.onSessionsChanged(() => broadcast({ type: 'sessions_changed' }))
  runtime.onSearchIndex((p) => broadcast({ type: 'search_index', ...p }))
  runtime.onStorageProblem((message) => broadcast({ type: 'storage_problem', message }))
  runtime.library.onDownloads((downloads) => broadcast({ type: 'local_downloads', downloads }))
  // Windows re-read the model list (as after a provider change) when local models come and go.
  runtime.onModelsChanged(() => broadcast({ type: 'settings_changed' }))
  /** Every window shows the same settings, theme and model list. */
  const settingsChanged = <T>(result: T): T => {
    broadcast({ type: 'settings_changed' })
    return result
  }

  const handlers: Handlers = {
    'app.info': () => appInfo(),
    'app.backups': () => ({ dir: join(runtime.dataDir, 'backups'), backups: runtime.backups() }),
    'app.backup_now': () => runtime.backupNow(),
    'app.restore_backup': (r) => ({
      scheduled: true as const,
      backup: runtime.restoreBackup(r.name),
      detail:
        'Restart Arbor to finish: the backup replaces the database at the next start, and the current one is kept aside.',
    }),
    'app.reveal_data_dir': async () => {
      if (!host.revealDataDir) return { revealed: false, path: runtime.dataDir }
      await host.revealDataDir(runtime.dataDir)
      return { revealed: true, path: runtime.dataDir }
    },
    'app.pick_folder': async (r, peer) =>
      host.pickFolder
        ? { supported: true, path: await host.pickFolder(peer, r) }
        : { supported: false, path: null },
    'workspace.check': (r) => inspectWorkspace(r.path, r.create),
    'sessions.create': async (r) => (await sessions.create(r)).get_info(),
    'sessions.get': async (r) => (await s(r.session_id)).get_info(),
    'sessions.list': (r) => sessions.list(r),
    'sessions.archive': ({ session_id, ...o }) => sessions.archive(session_id, o),
    'sessions.archived': () => sessions.archived(),
    'sessions.clean_archive': () => sessions.clean_archive(),
    'sessions.remove': (r) => sessions.remove(r.session_id),
    'sessions.clear_messages': (r) => sessions.clear_messages(r.session_id),
    'sessions.rename': (r) => sessions.rename(r.session_id, r.title),
    'sessions.search': ({ query, ...o }) => sessions.search(query, o),
    'sessions.trash': (r) => sessions.trash(r.session_id),
    'sessions.trashed': () => sessions.trashed(),
    'sessions.restore': (r) => sessions.restore(r.session_id),
    'sessions.empty_trash': () => sessions.empty_trash(),
    'sessions.export': ({ session_id, ...o }) => sessions.export(session_id, o),
    'sessions.import': (r) => sessions.import(r),
    'sessions.export_open': async ({ session_id, format }, peer) => {
      const { parts, ...file } = await runtime.exportParts(session_id, format, TRANSFER_PART_CHARS)
      return { transfer_id: transfers.openExport(peer.id, parts), ...file, parts: parts.length }
    },
    'sessions.export_read': (r, peer) => ({ text: transfers.read(peer.id, r.transfer_id, r.index) }),
    'sessions.import_write': (r, peer) => transfers.write(peer.id, r.transfer_id, r.text),
    'sessions.import_commit': ({ transfer_id }, peer) => {
      // How far the writing is, to the importing connection: at most every 100 ms, and the end.
      let last = 0
      const onProgress = ({ done, total }: ImportProgress) => {
        if (done < total && performance.now() - last < 100) return
        last = performance.now()
        peer.send({ type: 'import_progress', transfer_id, done, total })
      }
      // Read a piece after the other: joined, a long file held the event loop 35 ms more.
      return runtime.importParts(transfers.take(peer.id, transfer_id), { onProgress })
    },
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
    'providers.probe': (r) => runtime.providers.probe(r),
    'providers.detect': () => runtime.providers.detect(),
    'local.info': () => runtime.local.describe(),
    'permissions.list': () => listPermissions(runtime.store),
    'permissions.revoke': (r) => {
      revokePermission(runtime.store, r)
      return { revoked: true as const }
    },
    'local.models': () => runtime.library.list(),
    'local.downloads': () => runtime.library.downloads.list(),
    'local.download': (r) => runtime.library.downloads.start(r),
    'local.pause': (r) => runtime.library.downloads.pause(r.download_id),
    'local.resume': (r) => runtime.library.downloads.resume(r.download_id),
    'local.cancel': (r) => runtime.library.downloads.cancel(r.download_id),
    'local.import': (r) => runtime.library.import(r.path),
    'local.remove': (r) => runtime.library.remove(r.file),
    'mcp.list': () => runtime.mcp.list(),
    'mcp.save': async (r) => settingsChanged(await runtime.mcp.save(r)),
    'mcp.remove': async (r) => {
      await runtime.mcp.remove(r.server_id)
      return settingsChanged({ removed: true as const })
    },
    'mcp.tools': (r) => runtime.mcp.toolInfos(r.server_id),
    'mcp.resources': (r) => runtime.mcp.resources(r.server_id),
    'mcp.read_resource': (r) => runtime.mcp.readResource(r.server_id, r.uri),
    'mcp.prompts': (r) => runtime.mcp.prompts(r.server_ids),
    'mcp.get_prompt': (r) => runtime.mcp.getPrompt(r.server_id, r.name, r.arguments),
    'session.messages': ({ session_id, ...o }) => on(session_id, (x) => x.messages(o)),
    'session.get_info': (r) => on(r.session_id, (x) => x.get_info()),
    'session.subscribe': async (r, peer) => {
      // Claimed before the await: an unsubscribe or a disconnect that comes while the session
      // is looked up withdraws the claim, and the subscription is then never made.
      const claim = Symbol(r.session_id)
      const mine = subscriptions.get(peer.id) ?? new Map<string, Subscription>()
      subscriptions.set(peer.id, mine)
      const known = mine.get(r.session_id)
      if (known) return { subscribed: true }
      mine.set(r.session_id, { claim, unsubscribe: null })
      const session = await s(r.session_id).catch((err: unknown) => {
        if (mine.get(r.session_id)?.claim === claim) mine.delete(r.session_id)
        throw err
      })
      const entry = mine.get(r.session_id)
      if (entry?.claim !== claim || subscriptions.get(peer.id) !== mine) return { subscribed: false }
      entry.unsubscribe = session.subscribe((mutation) => peer.send({ type: 'mutation', mutation }))
      return { subscribed: true }
    },
    'session.unsubscribe': (r, peer) => {
      unsubscribe(peer.id, r.session_id)
      return { subscribed: false }
    },
    // The parsed request itself (its session_id is the session's): the Session API knows it parsed.
    'session.prompt': async (r) => {
      const { id, command_id } = await (await s(r.session_id)).prompt(r)
      return { id, command_id }
    },
    'session.wait_turn': async (r) => (await on(r.session_id, (x) => x.turn(r.turn_id))).finished,
    'session.turn': async (r) => {
      const { id, command_id } = await on(r.session_id, (x) => x.turn(r.turn_id))
      return { id, command_id }
    },
    'session.status': (r) => on(r.session_id, (x) => x.status()),
    'session.stop': (r) => on(r.session_id, (x) => x.stop()),
    'session.interactions': (r) => on(r.session_id, (x) => x.interactions()),
    'session.respond': ({ session_id, ...req }) => on(session_id, (x) => x.respond(req)),
    'session.steer': (r) => on(r.session_id, (x) => x.steer(r.text)),
    'session.pause': (r) => on(r.session_id, (x) => x.pause()),
    'session.run': ({ session_id, ...o }) => on(session_id, (x) => x.run(o)),
    'session.unqueue': (r) => on(r.session_id, (x) => x.unqueue(r.command_id)),
    'session.set': ({ session_id, ...changes }) => on(session_id, (x) => x.set(changes)),
    'session.compact': (r) => on(r.session_id, (x) => x.compact()),
    'session.fork': async ({ session_id, ...req }) => (await on(session_id, (x) => x.fork(req))).get_info(),
    'session.head': (r) => on(r.session_id, (x) => x.head()),
    'session.snapshot': (r) => on(r.session_id, (x) => x.snapshot()),
    'session.snapshots': ({ session_id, ...o }) => on(session_id, (x) => x.snapshots(o)),
    'session.syncshot': (r) => on(r.session_id, (x) => x.syncshot()),
    'session.inspect': (r) => on(r.session_id, (x) => x.inspect()),
    'session.system': (r) => on(r.session_id, (x) => x.system()),
    'session.capabilities': (r) => on(r.session_id, (x) => x.capabilities()),
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
        const parsed = parseRequest(m, params)
        const handler = handlers[m] as Handler<Method>
        return { ok: true, data: await handler(parsed as never, peer) }
      } catch (err) {
        return { ok: false, error: toErrorShape(err) }
      }
    },
    disconnect(peer) {
      for (const sub of subscriptions.get(peer.id)?.values() ?? []) sub.unsubscribe?.()
      subscriptions.delete(peer.id)
      peers.delete(peer.id)
      transfers.drop(peer.id)
    },
  }
}
