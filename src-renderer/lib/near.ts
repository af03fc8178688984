/**
 * Calls back once an element comes near the viewport, through one IntersectionObserver per
 * scroll container for every element watched in it: work a reader cannot see yet (highlighting
 * a code block) waits until it is about to be seen. The margin is around the element's scroll
 * container (the closest `[data-near-root]`, else the window): around the window alone it would
 * never reach what the container clips. Where there is no IntersectionObserver (tests), it calls
 * back at once.
 */
export type WhenNear = (el: Element, near: () => void) => () => void

export function nearWatcher(rootMargin: string): WhenNear {
  const waiting = new Map<Element, () => void>()
  const observers = new Map<Element | null, IntersectionObserver>()
  const observerFor = (root: Element | null) => {
    let observer = observers.get(root)
    if (!observer) {
      const made = new IntersectionObserver(
        (entries) => {
          for (const e of entries) {
            if (!e.isIntersecting) continue
            const call = waiting.get(e.target)
            waiting.delete(e.target)
            made.unobserve(e.target)
            call?.()
          }
        },
        { root, rootMargin },
      )
      observers.set(root, made)
      observer = made
    }
    return observer
  }
  return (el, near) => {
    if (typeof IntersectionObserver === 'undefined') {
      near()
      return () => {}
    }
    const observer = observerFor(el.closest('[data-near-root]'))
    waiting.set(el, near)
    observer.observe(el)
    return () => {
      waiting.delete(el)
      observer.unobserve(el)
    }
  }
}
