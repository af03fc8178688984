import { useLayoutEffect, useState, type RefObject } from 'react'

/**
 * How many levels of a header's controls are folded into its overflow menu: the next level
 * folds while the header's row wraps, and a level comes back once the header is clearly wider
 * than where it folded (a margin, so it does not flip back and forth at one width). `key`
 * names what the header shows; when it changes, folding starts over. Layout effects re-render
 * before the browser paints, so the steps in between never show.
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
    const check = () => {
      const width = el.clientWidth
      if (level < levels && wraps(el))
        setFold((f) => ({ ...f, level: level + 1, at: [...at.slice(0, level), width] }))
      else if (level > 0 && width > (at[level - 1] ?? 0) + UNFOLD_MARGIN)
        setFold((f) => ({ ...f, level: level - 1 }))
    }
    check()
    const observer = new ResizeObserver(check)
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
