import { useMemo } from 'react'
import { sessionTree, type TreeNode } from '../state/tree'
import { useActions, useApp } from '../state/hooks'
import { ArchiveSection } from './ArchiveSection'
import { GearIcon, PlusIcon } from './Icons'
import { SearchBox, SearchResults } from './Search'
import { SessionItem } from './SessionItem'

function Branch({ node, openId }: { node: TreeNode; openId: string | null }) {
  return (
    <SessionItem info={node.info} depth={node.depth} selected={node.info.session_id === openId}>
      {node.children.length > 0 && (
        <ul className="session-children" aria-label={`Forks of ${node.info.title}`}>
          {node.children.map((c) => (
            <Branch key={c.info.session_id} node={c} openId={openId} />
          ))}
        </ul>
      )}
    </SessionItem>
  )
}

/** Search, "New chat", the sessions as a lineage tree (forks under their parent), the archive. */
export function Sidebar() {
  const sessions = useApp((s) => s.sessions)
  const openId = useApp((s) => s.transcript?.session_id ?? null)
  const ready = useApp((s) => s.ready)
  const searching = useApp((s) => s.search.query.trim() !== '')
  const { newChat, setDialog } = useActions()
  const tree = useMemo(() => sessionTree(sessions), [sessions])

  return (
    <nav className="sidebar" aria-label="Sessions">
      <div className="sidebar-head">
        <span className="brand">
          <span className="brand-mark" aria-hidden="true" />
          Arbor
        </span>
        <button type="button" className="btn btn-primary new-chat" onClick={() => void newChat()}>
          <PlusIcon /> New chat
        </button>
        <SearchBox />
      </div>
      {searching ? (
        <SearchResults />
      ) : (
        <div className="sidebar-scroll">
          {ready && sessions.length === 0 ? (
            <p className="sidebar-empty">No conversations yet.</p>
          ) : (
            <ul className="session-list">
              {tree.map((n) => (
                <Branch key={n.info.session_id} node={n} openId={openId} />
              ))}
            </ul>
          )}
          <ArchiveSection />
        </div>
      )}
      <div className="sidebar-foot">
        <button type="button" className="btn btn-ghost" onClick={() => setDialog('settings')}>
          <GearIcon /> Settings
        </button>
        <button
          type="button"
          className="btn btn-ghost"
          aria-label="Keyboard shortcuts"
          title="Keyboard shortcuts (Ctrl+/)"
          onClick={() => setDialog('shortcuts')}
        >
          ⌨ Shortcuts
        </button>
      </div>
    </nav>
  )
}
