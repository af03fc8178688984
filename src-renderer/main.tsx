import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { createArbor } from '../src-shared/sdk'
import { App } from './App'
import { selectTransport } from './client/transport'
import { AppContext } from './state/hooks'
import { createApp } from './state/store'
import './styles/index.css'

// The open session lives in the URL hash (#/s/<id>) so a reload reopens it, in Electron
// (file://) and in the browser host alike.
const HASH = /^#\/s\/([\w-]+)$/

function sessionFromHash(): string | null {
  return HASH.exec(window.location.hash)?.[1] ?? null
}

function writeHash(session_id: string | null) {
  const hash = session_id ? `#/s/${session_id}` : ''
  if (window.location.hash === hash) return
  const { pathname, search } = window.location
  window.history.replaceState(null, '', `${pathname}${search}${hash}`)
}

const { transport, kind, hasToken, checkToken } = selectTransport()
const app = createApp(createArbor(transport), { initialSessionId: sessionFromHash(), onOpen: writeHash })

window.addEventListener('hashchange', () => {
  const id = sessionFromHash()
  if (id) void app.actions.openSession(id)
})

const root = document.getElementById('root')
if (!root) throw new Error('index.html has no #root element')
createRoot(root).render(
  <StrictMode>
    <AppContext value={app}>
      <App host={kind} hasToken={hasToken} checkToken={checkToken} />
    </AppContext>
  </StrictMode>,
)
void app.actions.boot()
