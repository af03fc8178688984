import type { TokenState } from './client/transport'
import { ChatHeader } from './components/ChatHeader'
import { COMPOSER_ID, Composer } from './components/Composer'
import { ConnectionBanner } from './components/ConnectionBanner'
import { HistoryPanel } from './components/HistoryPanel'
import { NoticeToast } from './components/NoticeToast'
import { PendingInteractions } from './components/PendingInteractions'
import { QueueList } from './components/QueueList'
import { Settings } from './components/Settings'
import { ShortcutKeys, ShortcutsHelp } from './components/Shortcuts'
import { Sidebar } from './components/Sidebar'
import { ThemeSync } from './components/Theme'
import { Transcript } from './components/Transcript'
import { useApp } from './state/hooks'

export interface AppProps {
  host: 'electron' | 'browser'
  hasToken: boolean
  checkToken?: () => Promise<TokenState>
}

/** The window: sessions on the left; the open conversation, its approvals and the composer; history on the right. */
export function App({ host, hasToken, checkToken }: AppProps) {
  const panel = useApp((s) => s.panel)
  const dialog = useApp((s) => s.dialog)
  const hasSession = useApp((s) => s.transcript !== null)
  const history = panel === 'history' && hasSession
  const sidebar = useApp((s) => s.sidebar)
  return (
    <div className={`app${history ? ' with-panel' : ''}${sidebar ? '' : ' no-sidebar'}`}>
      {/* The first stop of Tab: past the sidebar's chats, straight to the message box. */}
      <a
        className="skip-link"
        href={`#${COMPOSER_ID}`}
        onClick={(e) => {
          e.preventDefault()
          document.getElementById(COMPOSER_ID)?.focus()
        }}
      >
        Skip to the message box
      </a>
      {sidebar && <Sidebar />}
      <main className="chat">
        <ConnectionBanner host={host} hasToken={hasToken} checkToken={checkToken} />
        <ChatHeader />
        <Transcript />
        <div className="dock">
          <PendingInteractions />
          <QueueList />
          <Composer />
        </div>
      </main>
      {history && <HistoryPanel />}
      {dialog === 'settings' && <Settings />}
      {dialog === 'shortcuts' && <ShortcutsHelp />}
      <NoticeToast />
      <ShortcutKeys />
      <ThemeSync />
    </div>
  )
}
