import type { ArborTransport } from '../../src-shared/contract'
import { createWorkerSocket } from './worker-socket'
import { createWsTransport } from '../../src-shared/sdk/ws'
import { TOKEN_CHECK_PATH } from '../../src-shared/host-paths'

declare global {
  interface Window {
    /** Set by the Electron preload; absent when the UI is served by the browser host. */
    arbor?: ArborTransport
  }
}

const TOKEN_KEY = 'arbor.token'

/**
 * The browser host prints `http://127.0.0.1:PORT/?token=TOKEN`. The token is kept in
 * sessionStorage (so a reload of this tab works) and removed from the address bar (so it does
 * not end up in history, bookmarks or screenshots).
 */
export function readToken(
  loc: Location = window.location,
  storage: Storage = window.sessionStorage,
): string | null {
  const params = new URLSearchParams(loc.search)
  const fromUrl = params.get('token')
  if (fromUrl) {
    try {
      storage.setItem(TOKEN_KEY, fromUrl)
    } catch {
      // Storage can be disabled; the token still works for this page load.
    }
    params.delete('token')
    const query = params.toString()
    window.history.replaceState(null, '', `${loc.pathname}${query ? `?${query}` : ''}${loc.hash}`)
    return fromUrl
  }
  try {
    return storage.getItem(TOKEN_KEY)
  } catch {
    return null
  }
}

export function socketUrl(loc: Pick<Location, 'protocol' | 'host'>, token: string | null): string {
  const scheme = loc.protocol === 'https:' ? 'wss' : 'ws'
  return `${scheme}://${loc.host}/ws?token=${encodeURIComponent(token ?? '')}`
}

export interface SelectedTransport {
  transport: ArborTransport
  kind: 'electron' | 'browser'
  /** Browser host only: whether a token was found at all (to explain a refused connection). */
  hasToken: boolean
  /** Browser host only: whether this tab's token is the running host's. */
  checkToken?: () => Promise<TokenState>
}

/** Electron's preload bridge when present, otherwise the WebSocket client. */
export function selectTransport(): SelectedTransport {
  if (window.arbor) return { transport: window.arbor, kind: 'electron', hasToken: true }
  const token = readToken()
  const transport = createWsTransport({
    url: () => socketUrl(window.location, token),
    // The socket lives in a worker where workers exist (every browser we target): a fast
    // stream then costs the page one task per frame instead of one per delta.
    ...(typeof Worker === 'function' ? { createSocket: createWorkerSocket } : {}),
  })
  return {
    transport,
    kind: 'browser',
    hasToken: token !== null,
    checkToken: token !== null ? () => checkToken(token) : undefined,
  }
}

export type TokenState = 'valid' | 'stale' | 'unreachable'

/**
 * Asks the browser host whether `token` is the running host's (see src-shared/host-paths.ts):
 * a refused socket and a host that is down look the same to a WebSocket.
 */
export async function checkToken(token: string, fetcher: typeof fetch = fetch): Promise<TokenState> {
  try {
    const res = await fetcher(`${TOKEN_CHECK_PATH}?token=${encodeURIComponent(token)}`, { cache: 'no-store' })
    if (res.status === 204) return 'valid'
    if (res.status === 401) return 'stale'
    return 'unreachable'
  } catch {
    return 'unreachable'
  }
}
