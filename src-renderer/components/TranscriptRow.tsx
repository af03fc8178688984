/*
 * The rows of the virtualised transcript (Transcript.tsx): each message measured as it mounts
 * and as it resizes, and the buttons at both ends of the list.
 */

import { memo, useLayoutEffect, useRef } from 'react'
import type { SessionMessage } from '../../src-shared/types'
import type { RowLayout } from '../lib/rows'
import type { MessageList } from '../state/messages'
import { MessageView } from './MessageView'

export interface Measure {
  heights: Map<string, number>
  /** Rows measured since the layout last took their heights. */
  changed: Set<string>
  dirty: boolean
  /**
   * Rows mounting now are measured by the row observer, after the browser's own layout, not by
   * reading layout as they mount: the view follows the end, where the browser places every row of
   * the window and nothing painted depends on a row's measured height.
   */
  lazy: boolean
}

export function record(m: Measure, key: string, h: number): void {
  const old = m.heights.get(key)
  if (old !== undefined && Math.abs(old - h) < 0.5) return
  m.heights.set(key, h)
  m.changed.add(key)
  m.dirty = true
}

interface RowProps {
  message: SessionMessage
  highlighted: boolean
  measure: Measure
  observer: ResizeObserver | null
}

/** The row layout takes the heights measured since it last did. */
export function takeHeights(rows: RowLayout, measure: Measure, messages: MessageList): void {
  for (const key of measure.changed) {
    const h = measure.heights.get(key)
    const i = messages.indexOf(key)
    if (h !== undefined && i >= 0) rows.setHeight(i, h)
  }
  measure.changed.clear()
}

/** One message in the window, measured when it mounts and whenever it resizes. */
export const Row = memo(function Row({ message, highlighted, measure, observer }: RowProps) {
  const ref = useRef<HTMLDivElement>(null)
  // Measured when it mounts (so the rows below it and the reader's place are right in its first
  // frame), unless the view follows the end; later changes of size come from the ResizeObserver,
  // after the browser's own layout: a streaming reply never forces an extra layout per frame.
  useLayoutEffect(() => {
    if (ref.current && !measure.lazy) record(measure, message.message_id, ref.current.offsetHeight)
  }, [measure, message.message_id])
  useLayoutEffect(() => {
    const el = ref.current
    if (!el || !observer) return
    observer.observe(el)
    return () => observer.unobserve(el)
  }, [observer])
  return (
    <div ref={ref} className={`vitem${highlighted ? ' focused' : ''}`} data-key={message.message_id}>
      <MessageView message={message} />
    </div>
  )
})

/** The button at one end of the list that loads the next page there. */
export function LoadMore(props: {
  at: 'older' | 'newer'
  busy: boolean
  load: () => Promise<void>
  what: string
}) {
  return (
    <div className={`load-${props.at}`}>
      <button type="button" className="btn btn-small" disabled={props.busy} onClick={() => void props.load()}>
        {props.busy ? `Loading ${props.what} messages…` : `Load ${props.what} messages`}
      </button>
    </div>
  )
}
