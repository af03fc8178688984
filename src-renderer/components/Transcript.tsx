/* eslint-disable react-hooks/set-state-in-effect, react-hooks/immutability --
 * A virtualiser measures the DOM after it renders and must correct positions before the frame
 * paints: state set in layout effects, and a measurement cache mutated outside React's data
 * flow (re-renders are requested explicitly through `measured`). */
import { useCallback, useEffect, useLayoutEffect, useReducer, useRef, useState } from 'react'
import { flushSync } from 'react-dom'
import { useReaderInput } from '../lib/reader-input'
import { RowLayout } from '../lib/rows'
import { useActions, useApp } from '../state/hooks'
import { MessageList } from '../state/messages'
import { EmptyState } from './EmptyState'
import { SECTIONS_ADDED } from './Markdown'
import { LoadMore, Row, record, takeHeights, type Measure } from './TranscriptRow'

/** How close to the bottom (px) still counts as "following" the conversation. */
const FOLLOW_SLACK = 64
/** Rendered beyond the viewport, above and below (px). */
const OVERSCAN = 900
/** Nearer than this to the top (px), the next older page loads. */
const LOAD_OLDER_PX = 700
/** Space above the first message (room for "Loading earlier messages…"). */
const PAD_TOP = 24
const PAD_TOP_MORE = 56
const PAD_BOTTOM = 8
/** Below a window's last row: its "Load newer messages" button, above "Jump to latest". */
const PAD_BOTTOM_MORE = 100
/**
 * The height of a row not measured yet. Fixed, not an average of the measured ones: a new
 * measurement then moves only the rows below it, never every row of the list.
 */
const ESTIMATE = 120
const NO_MESSAGES = MessageList.empty()

/** The rows to render for a viewport (its height unknown before the first layout). */
function visibleRows(rows: RowLayout, view: { top: number; height: number }, padTop: number) {
  return rows.visibleRange(view.top - padTop, view.height || 900, OVERSCAN)
}

/**
 * The conversation, newest at the bottom, virtualised: only the messages near the viewport are
 * in the DOM, so a 10,000-message session scrolls like a short one. The window of rows is in
 * normal flow between two spaces, as tall as the rows above and below it; heights are measured
 * as rows render (estimated until then); a scroll anchor keeps the reader's place when older
 * pages are prepended or rows above change size. It follows new output while the reader is at
 * the bottom and stays put when they scrolled up (a "Jump to latest" button appears). Scrolling
 * near the top loads the next older page. A search hit far back is shown in a window of the
 * chat around it (Transcript.newer_cursor): scrolling near its end loads the next newer page,
 * and "Jump to latest" replaces it with the newest page.
 */
export function Transcript() {
  const transcript = useApp((s) => s.transcript)
  const loadingOlder = useApp((s) => s.loadingOlder)
  const loadingNewer = useApp((s) => s.loadingNewer)
  const focus = useApp((s) => s.focus)
  const { loadOlder, loadNewer, showLatest } = useActions()
  const ref = useRef<HTMLDivElement>(null)
  const [measure] = useState<Measure>(() => ({
    heights: new Map(),
    changed: new Set(),
    dirty: false,
    lazy: false,
  }))
  const [rows] = useState(() => new RowLayout(ESTIMATE))
  const [measured, setMeasured] = useState(0)
  // Where the viewport is, the range of rows that was rendered for it, and whether it follows
  // the end. Held outside React's state: scrolling (ours to follow a stream, or the reader's)
  // re-renders only when the range of rows to show changes, not on every scroll position.
  const [view] = useState(() => ({ top: 0, height: 0, start: 0, end: 0, follow: true }))
  const [, rangeChanged] = useReducer((n: number) => n + 1, 0)
  const [away, setAway] = useState(false)
  const [highlight, setHighlight] = useState<string | null>(null)
  const [observer, setObserver] = useState<ResizeObserver | null>(null)
  const anchor = useRef<{ key: string; delta: number } | null>(null)
  const listRef = useRef<HTMLDivElement>(null)
  /** What the layout effect last pinned to the end: the chat, its length, the rows shown. */
  const pinned = useRef<string | null>(null)
  /** The scrollTop we set ourselves: its scroll event is not the reader's doing. */
  const expected = useRef<number | null>(null)
  /** The list's and the viewport's heights when the view was last put at the end. */
  const seen = useRef({ list: 0, viewport: 0 })
  const handledFocus = useRef<number | null>(null)

  const sessionId = transcript?.session_id
  const messages = transcript?.messages ?? NO_MESSAGES
  const olderCursor = transcript?.older_cursor ?? null
  // A window away from the newest messages (a search hit far back): it never follows the end,
  // which is not the chat's; reaching its end loads the next newer page.
  const newerCursor = transcript?.newer_cursor ?? null
  if (newerCursor) view.follow = false
  // The row layout follows the rows the list added and the rows measured since the last render
  // (`measured` counts measurements): O(changed rows), whatever the number of messages. Doing
  // it again for the same list and heights changes nothing, so a repeated render is harmless.
  rows.follow(messages, (key) => measure.heights.get(key))
  takeHeights(rows, measure, messages)
  const padTop = olderCursor ? PAD_TOP_MORE : PAD_TOP
  const total = rows.total()
  const { start, end } = visibleRows(rows, view, padTop)
  view.start = start
  view.end = end
  measure.lazy = view.follow && end === messages.length
  /** The space above the window: the padding and the rows above it. */
  const above = padTop + rows.top(start)

  // The latest layout, for the scroll handler.
  const latest = useRef({ messages, padTop, olderCursor, loadingOlder, newerCursor, loadingNewer })
  useLayoutEffect(() => {
    latest.current = { messages, padTop, olderCursor, loadingOlder, newerCursor, loadingNewer }
  })

  /**
   * Takes the viewport's position; re-renders when the rows rendered no longer cover what it
   * needs, or hold more than an overscan's height beyond it (the view following a growing list
   * moves down without a render of its own).
   */
  const viewFrom = useCallback(
    (el: HTMLElement) => {
      view.top = el.scrollTop
      view.height = el.clientHeight
      const need = visibleRows(rows, view, latest.current.padTop)
      const beyond = rows.top(need.start) - rows.top(view.start) + rows.top(view.end) - rows.top(need.end)
      if (need.start < view.start || need.end > view.end || beyond > OVERSCAN) rangeChanged()
    },
    [view, rows],
  )

  const scrollTo = useCallback(
    (el: HTMLElement, top: number) => {
      el.scrollTop = top
      expected.current = el.scrollTop
      viewFrom(el)
    },
    [viewFrom],
  )

  /** To the end of the list, if the view is not there already. */
  const pinToEnd = useCallback(
    (el: HTMLElement) => {
      seen.current = { list: el.scrollHeight, viewport: el.clientHeight }
      const bottom = el.scrollHeight - el.clientHeight
      if (Math.abs(el.scrollTop - bottom) > 1) scrollTo(el, bottom)
    },
    [scrollTo],
  )

  const readerScrolling = useReaderInput(ref)

  // Rows that change size after rendering (a details opened, the window resized, fonts loaded),
  // and the list's height (any change of what the view scrolls). Called after the browser's own
  // layout, so reading sizes here costs no layout of its own.
  useEffect(() => {
    if (typeof ResizeObserver === 'undefined') return
    const ro = new ResizeObserver((entries) => {
      for (const e of entries) {
        const key = (e.target as HTMLElement).dataset.key
        if (key) record(measure, key, (e.target as HTMLElement).offsetHeight)
      }
      const { messages } = latest.current
      if (view.follow && view.end === messages.length) {
        // The view follows the end, and rows grew or arrived (a streaming reply, a new message)
        // or the list changed height: the browser has placed every row of the window, so
        // nothing moves but the end, where the view stays. The row layout takes the heights
        // now, for the rows the view needs next: no render, and no second layout, per frame.
        measure.dirty = false
        takeHeights(rows, measure, messages)
        if (ref.current) pinToEnd(ref.current)
        return
      }
      if (!measure.dirty) return
      measure.dirty = false
      // Before this frame paints, so positions never lag a frame behind.
      flushSync(() => setMeasured((n) => n + 1))
    })
    setObserver(ro)
    return () => ro.disconnect()
  }, [measure, rows, view, pinToEnd])

  // The list itself, with the rows: a change of its height is seen after the browser's layout.
  const empty = transcript === null || (transcript.loaded && messages.length === 0)
  useLayoutEffect(() => {
    const list = listRef.current
    if (!list || !observer) return
    observer.observe(list)
    return () => observer.unobserve(list)
  }, [observer, empty])

  const toBottom = useCallback(() => {
    const el = ref.current
    // From a window: the newest page replaces it, and the view goes to its end then (the new
    // list's effect below); scrolling to the window's end now would only read its next page.
    if (latest.current.newerCursor) {
      setAway(false)
      void showLatest()
      return
    }
    view.follow = true
    anchor.current = null
    setAway(false)
    if (el) scrollTo(el, el.scrollHeight)
  }, [view, scrollTo, showLatest])

  // A prompt sent from this window while scrolled up: back to the bottom, where it appears.
  const sent = useApp((s) => s.sent)
  const seenSent = useRef(sent)
  useEffect(() => {
    if (seenSent.current === sent) return
    seenSent.current = sent
    toBottom()
  }, [sent, toBottom])

  // A newly opened session starts at its newest message, and so does one read again from its
  // newest page (a new list: reloaded, or a window left for the newest messages). A window read
  // around a message is scrolled to it (the focus, below).
  const lineage = messages.growth.lineage
  useLayoutEffect(() => {
    if (latest.current.newerCursor) return
    view.follow = true
    anchor.current = null
    setAway(false)
    const el = ref.current
    if (el) viewFrom(el)
  }, [sessionId, lineage, view, viewFrom])

  // After every layout change: re-measure if rows changed size, then pin to the bottom or hold
  // the anchor; and keep pages coming while the content does not fill the viewport. Runs after
  // every render on purpose; each state update in it is guarded by a real change.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useLayoutEffect(() => {
    const el = ref.current
    if (!el) return
    if (measure.dirty) {
      measure.dirty = false
      setMeasured((n) => n + 1)
      return
    }
    if (view.follow) {
      // Rows added at the end (a streamed frame, a reply's new row) leave the view to the
      // browser's scroll anchor (the marker after the rows, transcript.css) and, after the
      // layout, to the observer of the list's height: reading scrollHeight here forces a layout
      // of its own (6-7 ms in the frame a reply's row comes, with a long reply streaming).
      // Another chat, its first page or an older one loaded: pinned now, before a scroll event
      // of the frame can find the view away from the end (a list that shrank while it loaded
      // was scrolled up).
      const shape = `${sessionId}:${messages.at(0)?.message_id ?? ''}`
      if (!observer || end !== messages.length || shape !== pinned.current) pinToEnd(el)
      pinned.current = end === messages.length ? shape : null
    } else if (anchor.current) {
      const i = messages.indexOf(anchor.current.key)
      if (i >= 0) {
        const want = padTop + rows.top(i) + anchor.current.delta
        if (Math.abs(el.scrollTop - want) > 1) scrollTo(el, want)
      }
    }
    // The viewport's own observer sees its height change (reading it here would force a layout).
    if (!observer && el.clientHeight !== view.height) viewFrom(el)
    if (olderCursor && !loadingOlder && total + padTop < view.height + LOAD_OLDER_PX) void loadOlder()
    // A window too short to scroll: its next page now (else when the reader nears its end).
    if (newerCursor && !loadingNewer && total + padTop < view.height) void loadNewer()
  })

  // A search hit: scroll to the message once it is loaded, flash it, and keep it marked until
  // the search is cleared.
  useLayoutEffect(() => {
    const el = ref.current
    if (!el || !focus || handledFocus.current === focus.nonce) return
    const i = messages.indexOf(focus.message_id)
    if (i < 0) return
    handledFocus.current = focus.nonce
    view.follow = false
    setAway(true)
    anchor.current = { key: focus.message_id, delta: -80 }
    scrollTo(el, padTop + rows.top(i) - 80)
    setHighlight(focus.message_id)
  }, [focus, messages, measured, rows, padTop, view, scrollTo])

  // A streaming reply's frame brought finished sections besides the growing one (Markdown.tsx):
  // the view goes to the new end now, before the browser decides which sections are near it.
  useEffect(() => {
    const el = ref.current
    if (!el) return
    // `measure.lazy`: as rendered, the view followed the end and the window reached it (the
    // markdown's event comes from this render's commit, before the layout effects below).
    const pin = () => {
      if (view.follow && measure.lazy) pinToEnd(el)
    }
    el.addEventListener(SECTIONS_ADDED, pin)
    return () => el.removeEventListener(SECTIONS_ADDED, pin)
  }, [view, measure, pinToEnd])

  // The viewport itself can change size (an approval opens below, the window is resized).
  useEffect(() => {
    const el = ref.current
    if (!el || typeof ResizeObserver === 'undefined') return
    const ro = new ResizeObserver(() => {
      viewFrom(el)
      if (view.follow) scrollTo(el, el.scrollHeight)
    })
    ro.observe(el)
    return () => ro.disconnect()
  }, [view, scrollTo, viewFrom])

  const onScroll = () => {
    const el = ref.current
    if (!el) return
    const top = el.scrollTop
    viewFrom(el)
    const mine = expected.current !== null && Math.abs(top - expected.current) < 1
    expected.current = null
    const { messages: list, padTop: pad, olderCursor: cursor, loadingOlder: busy } = latest.current
    const { newerCursor: newer, loadingNewer: busyNewer } = latest.current
    const gap = el.scrollHeight - top - el.clientHeight
    if (!mine && view.follow && !readerScrolling()) {
      // The view left the end although the reader did nothing: the browser moved it while it
      // laid the list out again (a resized window reflows a long reply, and keeps some line in
      // place), by no more than the list and the viewport changed since the view was at the
      // end. It goes back there; a find in the page or a screen reader moves it further.
      const moved =
        Math.abs(el.scrollHeight - seen.current.list) + Math.abs(el.clientHeight - seen.current.viewport)
      if (gap <= moved + FOLLOW_SLACK) {
        pinToEnd(el)
        return
      }
    }
    if (!mine) {
      const atBottom = gap <= FOLLOW_SLACK
      view.follow = atBottom && !newer
      setAway(!view.follow)
      const i = rows.indexAt(Math.max(0, top - pad))
      const key = list.at(i)?.message_id
      if (key) anchor.current = { key, delta: top - pad - rows.top(i) }
    }
    if (cursor && !busy && top < LOAD_OLDER_PX) void loadOlder()
    if (newer && !busyNewer && gap < LOAD_OLDER_PX) void loadNewer()
  }

  return (
    <div className="transcript-wrap">
      <div
        ref={ref}
        className="transcript"
        role="log"
        aria-label="Transcript"
        data-near-root=""
        aria-busy={transcript !== null && !transcript.loaded}
        tabIndex={0}
        onScroll={onScroll}
        onKeyDown={(e) => {
          // End goes to the chat's end, which a window's end is not.
          if (e.key !== 'End' || e.shiftKey || e.altKey || !newerCursor) return
          e.preventDefault()
          toBottom()
        }}
      >
        {empty ? (
          <div className="transcript-empty">
            <EmptyState />
          </div>
        ) : (
          <div
            ref={listRef}
            className="vlist"
            style={{
              paddingTop: above,
              paddingBottom: total - rows.top(end) + (newerCursor ? PAD_BOTTOM_MORE : PAD_BOTTOM),
            }}
          >
            {olderCursor && <LoadMore at="older" busy={loadingOlder} load={loadOlder} what="earlier" />}
            <div className={away ? 'vwindow' : 'vwindow vwindow-end'}>
              {messages.slice(start, end).map((m) => (
                <Row
                  key={m.message_id}
                  message={m}
                  highlighted={highlight === m.message_id && focus?.message_id === m.message_id}
                  measure={measure}
                  observer={observer}
                />
              ))}
            </div>
            {newerCursor && <LoadMore at="newer" busy={loadingNewer} load={loadNewer} what="newer" />}
            <div className="vend" aria-hidden="true" />
          </div>
        )}
      </div>
      {(away || newerCursor) && (
        <button type="button" className="btn btn-small jump-latest" onClick={toBottom}>
          Jump to latest ↓
        </button>
      )}
    </div>
  )
}
