import { ChatHeader } from './components/ChatHeader'
import { Composer } from './components/Composer'
import { ConnectionBanner } from './components/ConnectionBanner'
import { NoticeToast } from './components/NoticeToast'
import { PendingInteractions } from './components/PendingInteractions'
import { QueueList } from './components/QueueList'
import { Sidebar } from './components/Sidebar'
import { Transcript } from './components/Transcript'

export interface AppProps {
  host: 'electron' | 'browser'
  hasToken: boolean
}

/** The window: sessions on the left; the open conversation, its approvals and the composer. */
export function App({ host, hasToken }: AppProps) {
  return (
    <div className="app">
      <Sidebar />
      <main className="chat">
        <ConnectionBanner host={host} hasToken={hasToken} />
        <ChatHeader />
        <Transcript />
        <div className="dock">
          <PendingInteractions />
          <QueueList />
          <Composer />
        </div>
      </main>
      <NoticeToast />
    </div>
  )
}
