import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron'
import { EVENT_CHANNEL, INVOKE_CHANNEL } from '../src-shared/channels'
import type { ArborTransport } from '../src-shared/contract'
import type { ServerEvent } from '../src-shared/types'

/**
 * The only thing the page gets: a typed transport as `window.arbor`. Never raw ipcRenderer —
 * the page can invoke our one channel and listen to our one event channel, nothing else.
 */
const arbor = {
  invoke: (method, params) => ipcRenderer.invoke(INVOKE_CHANNEL, method, params),
  onEvent(listener) {
    const handler = (_event: IpcRendererEvent, payload: ServerEvent) => listener(payload)
    ipcRenderer.on(EVENT_CHANNEL, handler)
    return () => {
      ipcRenderer.removeListener(EVENT_CHANNEL, handler)
    }
  },
} satisfies ArborTransport

contextBridge.exposeInMainWorld('arbor', arbor)
