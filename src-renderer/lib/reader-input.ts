import { useEffect, useRef, type RefObject } from 'react'

/** A scroll this soon after the reader's wheel, finger or key is theirs (ms). */
const READER_MS = 800

/**
 * Whether the reader is scrolling `ref`'s element themselves: they used the wheel, a finger or
 * a key in the last READER_MS, or hold a pointer down on it (the scrollbar). A scroll without
 * any of it is the browser's doing (a reflow keeping some line in place) or another program's.
 */
export function useReaderInput(ref: RefObject<HTMLElement | null>): () => boolean {
  const input = useRef({ at: -Infinity, held: false })
  useEffect(() => {
    const el = ref.current
    if (!el) return
    const used = () => (input.current.at = performance.now())
    const down = () => {
      used()
      input.current.held = true
    }
    const up = () => {
      used()
      input.current.held = false
    }
    el.addEventListener('wheel', used, { passive: true })
    el.addEventListener('touchmove', used, { passive: true })
    el.addEventListener('pointerdown', down)
    window.addEventListener('pointerup', up)
    window.addEventListener('pointercancel', up)
    window.addEventListener('keydown', used)
    return () => {
      el.removeEventListener('wheel', used)
      el.removeEventListener('touchmove', used)
      el.removeEventListener('pointerdown', down)
      window.removeEventListener('pointerup', up)
      window.removeEventListener('pointercancel', up)
      window.removeEventListener('keydown', used)
    }
  }, [ref])
  return () => input.current.held || performance.now() - input.current.at <= READER_MS
}
