/* eslint-disable react-hooks/immutability -- the row-height cache is mutated outside React's
 * data flow, as in Transcript.tsx; re-renders are requested through `measured`. */
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react'
import { flushSync } from 'react-dom'
import { computeOffsets, sameKeys, visibleRange, type LastKeys } from '../lib/virtual'
import { sessionTree, type TreeNode } from '../state/tree'
import { useActions, useApp } from '../state/hooks'
import { ArchiveSection } from './ArchiveSection'
import { TrashSection } from './TrashSection'
import { GearIcon, PlusIcon } from './Icons'
import { SearchBox, SearchResults } from './Search'
import { SessionItem } from './SessionItem'

/** Estimated height (px) of a root row before it is measured. */
const ROW_ESTIMATE = 44
/** Rows rendered beyond the visible part of the list, above and below (px). */
const OVERSCAN = 600

/**
 * Keeps a row's measured height; whether it changed (by half a pixel or more). A row that is
 * not laid out (the list hidden: `display: none` above it) measures 0, which is not its height:
 * taken, every row fit in the view, the next rows were rendered to fill it, measured 0 in turn,
 * and so on until React gave up (error #185) and the app went blank.
 */
function record(heights: Map<string, number>, key: string, row: HTMLElement): boolean {
  if (row.offsetParent === null) return false
  const h = row.offsetHeight
  if (Math.abs((heights.get(key) ?? -1) - h) < 0.5) return false
  heights.set(key, h)
  return true
}

/** True when `openId` is this node or one of its forks (its row must re-render). */
function holds(node: TreeNode, id: string | null): boolean {
  return id !== null && (node.info.session_id === id || node.children.some((c) => holds(c, id)))
}

interface BranchProps {
  node: TreeNode
  openId: string | null
  position?: { index: number; size: number }
}

const Branch = memo(
  function Branch({ node, openId, position }: BranchProps) {
    return (
      <SessionItem
        info={node.info}
        depth={node.depth}
        selected={node.info.session_id === openId}
        position={position}
      >
        {node.children.length > 0 && (
          <ul className="session-children" aria-label={`Forks of ${node.info.title}`}>
            {node.children.map((c) => (
              <Branch key={c.info.session_id} node={c} openId={openId} />
            ))}
          </ul>
        )}
      </SessionItem>
    )
  },
  // Opening a session re-renders the two rows it concerns, not all 2,000.
  (a, b) =>
    a.node === b.node &&
    a.position?.index === b.position?.index &&
    a.position?.size === b.position?.size &&
    (a.openId === b.openId || (!holds(a.node, a.openId) && !holds(b.node, b.openId))),
)

/**
 * The session tree, virtualised by root (a root row carries its forks): only the rows near the
 * visible part of the scroller are in the DOM, so 2,000 chats cost what 30 do, for layout and
 * for every frame painted while a reply streams. Spacers above and below keep the scroll
 * height; rows are measured as they render. Keyboard navigation goes through the store
 * (`openRelative`), and the open session is scrolled into view when it changes.
 */
function SessionList({ tree, openId }: { tree: TreeNode[]; openId: string | null }) {
  const ref = useRef<HTMLUListElement>(null)
  const [heights] = useState(() => new Map<string, number>())
  const [measured, setMeasured] = useState(0)
  const [view, setView] = useState({ top: 0, height: 800 })
  // The last keys, kept while the rows' order holds (sameKeys): most list changes are one row's
  // info, and the offsets below are then not computed again.
  const [last] = useState<LastKeys<TreeNode>>(() => ({ items: [], keys: [] }))
  const keys = useMemo(() => sameKeys(tree, (n) => n.info.session_id, last), [tree, last])
  const offsets = useMemo(
    () => computeOffsets(keys, heights, ROW_ESTIMATE),
    // `measured` changes whenever a height does (the map is mutated in place).
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [keys, heights, measured],
  )
  // The list is the scroller's first child: its rows start at the scroller's top.
  const { start, end } = visibleRange(offsets, view.top, view.height, OVERSCAN)
  const total = offsets[keys.length]

  // Follow the scroller (the list shares it with the archive section below).
  useEffect(() => {
    const scroller = ref.current?.parentElement
    if (!scroller) return
    const update = () =>
      setView((v) =>
        v.top === scroller.scrollTop && v.height === scroller.clientHeight
          ? v
          : { top: scroller.scrollTop, height: scroller.clientHeight },
      )
    update()
    scroller.addEventListener('scroll', update, { passive: true })
    const ro = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(update)
    ro?.observe(scroller)
    return () => {
      scroller.removeEventListener('scroll', update)
      ro?.disconnect()
    }
  }, [])

  // Rows change size after they are first laid out (forks open, titles wrap): a ResizeObserver
  // hears of it after the browser's own layout. Reading every row's height after each render
  // instead forced a layout of the whole window in the middle of React's commit — with a
  // reply arriving in the transcript beside it, a fresh layout of that too, at every turn of
  // every chat (the list re-renders when any chat's info changes).
  const observer = useRef<ResizeObserver | null>(null)
  const observed = useRef(new Set<Element>())
  useEffect(
    () => () => {
      observer.current?.disconnect()
      // A remount (React's strict mode does one) starts over: nothing is observed any more.
      observer.current = null
      observed.current = new Set()
    },
    [],
  )
  // Rows new to the DOM: measured now, so they are placed right in their first frame (a row
  // seen before keeps its height), and observed from now on; rows that left are let go.
  // Runs after every render on purpose: it touches the layout only for rows never measured.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useLayoutEffect(() => {
    const list = ref.current
    if (!list) return
    if (!observer.current && typeof ResizeObserver !== 'undefined')
      observer.current = new ResizeObserver((entries) => {
        let grew = false
        for (const e of entries) {
          const li = e.target as HTMLElement
          const key = li.dataset.key
          // The layout is clean while observers run: this reads it, it does not force one.
          if (key && li.isConnected && record(heights, key, li)) grew = true
        }
        if (grew) flushSync(() => setMeasured((n) => n + 1))
      })
    const ro = observer.current
    let changed = false
    const now = new Set<Element>()
    for (const li of list.children) {
      const key = (li as HTMLElement).dataset.key
      if (!key) continue
      if (!heights.has(key) && record(heights, key, li as HTMLElement)) changed = true
      now.add(li)
      if (ro && !observed.current.has(li)) ro.observe(li)
    }
    if (ro) for (const li of observed.current) if (!now.has(li)) ro.unobserve(li)
    observed.current = now
    if (changed) setMeasured((n) => n + 1)
  })

  // The open session (from a shortcut, a search hit, another window) is scrolled into view.
  const rootOfOpen = useMemo(() => tree.findIndex((n) => holds(n, openId)), [tree, openId])
  useLayoutEffect(() => {
    const list = ref.current
    const scroller = list?.parentElement
    if (!list || !scroller || rootOfOpen < 0) return
    const top = offsets[rootOfOpen]
    const bottom = offsets[rootOfOpen + 1] + 12
    // Where the scroller is, as its events last said: reading it here would force a layout in
    // the middle of the commit (a prompted chat moves to the top of the list as a reply starts).
    if (top < view.top) scroller.scrollTop = top
    else if (bottom > view.top + view.height) scroller.scrollTop = bottom - view.height
    // Only when the open session changes, not on every measurement.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [rootOfOpen])

  return (
    <ul
      ref={ref}
      className="session-list"
      aria-label="Chats"
      style={{ paddingTop: 4 + offsets[start], paddingBottom: 8 + total - offsets[end] }}
    >
      {tree.slice(start, end).map((n, i) => (
        <Branch
          key={n.info.session_id}
          node={n}
          openId={openId}
          position={{ index: start + i, size: tree.length }}
        />
      ))}
    </ul>
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
            <SessionList tree={tree} openId={openId} />
          )}
          <ArchiveSection />
          <TrashSection />
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
