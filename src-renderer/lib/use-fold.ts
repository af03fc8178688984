import { useLayoutEffect, useState, type RefObject } from 'react'
import { flushSync } from 'react-dom'

/**
 * How many levels of a header's controls are folded into its overflow menu: the next level
 * folds while the header's row wraps, and a level comes back once the header is clearly wider
 * than where it folded (a margin, so it does not flip back and forth at one width). `key`
 * names what the header shows; when it changes, folding starts over. Unfolded, the header is
 * checked when its ResizeObserver reports it, after the browser's own layout and before it
 * paints (a check in React's commit forces a layout of the whole window: twice a turn, as a
 * status badge comes and goes beside a streaming reply). Each step re-renders at once and the
 * next one is checked in that commit, so the steps in between never show.
 */
export function useFold(ref: RefObject<HTMLElement | null>, levels: number, key: string): number {
  // `at[i]`: the header's width when level i + 1 folded.
  const [fold, setFold] = useState<{ key: string; level: number; at: number[] }>({ key, level: 0, at: [] })
  // Other content (a badge came or went, another chat): measure afresh from nothing folded.
  if (fold.key !== key) setFold({ key, level: 0, at: [] })
  const { level, at } = fold
  useLayoutEffect(() => {
    const el = ref.current
    if (!el) return
    // In the commit, a state update re-renders before the paint anyway; from the observer, it
    // has to be flushed to do so.
    const check = (now: (update: () => void) => void) => {
      const width = el.clientWidth
      if (level < levels && wraps(el))
        now(() => setFold((f) => ({ ...f, level: level + 1, at: [...at.slice(0, level), width] })))
      else if (level > 0 && width > (at[level - 1] ?? 0) + UNFOLD_MARGIN)
        now(() => setFold((f) => ({ ...f, level: level - 1 })))
    }
    // Folding on (level > 0): the next step at once, so the steps in between never show. At
    // level 0, the observer's first report (after the next layout) checks whether to fold.
    if (level > 0) check((update) => update())
    const observer = new ResizeObserver(() => check(flushSync))
    observer.observe(el)
    return () => observer.disconnect()
  }, [ref, level, at, levels, key])
  return fold.key === key ? level : 0
}

const UNFOLD_MARGIN = 48

/** The element's children (and their children's rows) are not on one line. */
function wraps(el: HTMLElement): boolean {
  // Items of one line differ in height (centred), not by a whole line.
  const apart = (items: HTMLElement[]) => {
    const tops = items.filter((i) => i.offsetParent !== null).map((i) => i.offsetTop)
    return tops.length > 1 && Math.max(...tops) - Math.min(...tops) > LINE
  }
  const rows = [...el.children] as HTMLElement[]
  return apart(rows) || rows.some((row) => apart([...row.children] as HTMLElement[]))
}

const LINE = 14
