import { ipcMain, type WebContents, type IpcMainInvokeEvent } from 'electron'
import { EVENT_CHANNEL, INVOKE_CHANNEL } from '../../src-shared/channels'
import type { ServerEvent } from '../../src-shared/types'
import { deltaBursts } from './delta-bursts'
import type { Peer, Router } from './router'

/**
 * The Electron transport: one ipcMain handler over the router. The caller's window is derived
 * from the event (never from the payload), and only our own main frame may call.
 */
export function bindElectronIpc(router: Router, isTrustedUrl: (url: string) => boolean): () => void {
  const peers = new Map<number, Peer>()

  const peerFor = (contents: WebContents): Peer => {
    let peer = peers.get(contents.id)
    if (!peer) {
      // A burst of deltas (a model at full speed) crosses as its first delta and one joined event.
      const bursts = deltaBursts((event: ServerEvent) => {
        if (!contents.isDestroyed()) contents.send(EVENT_CHANNEL, event)
      })
      peer = { id: `wc-${contents.id}`, send: bursts.send }
      peers.set(contents.id, peer)
      const p = peer
      contents.once('destroyed', () => {
        router.disconnect(p)
        peers.delete(contents.id)
      })
    }
    return peer
  }

  ipcMain.handle(INVOKE_CHANNEL, async (event: IpcMainInvokeEvent, method: unknown, params: unknown) => {
    const frame = event.senderFrame
    if (!frame || frame !== event.sender.mainFrame || !isTrustedUrl(frame.url))
      return { ok: false, error: { code: 'forbidden', message: 'This frame may not call Arbor.' } }
    return router.handle(method, params, peerFor(event.sender))
  })
  return () => ipcMain.removeHandler(INVOKE_CHANNEL)
}
