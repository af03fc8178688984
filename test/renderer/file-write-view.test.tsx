import { act } from 'react'
import { createRoot, type Root } from 'react-dom/client'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { FileWriteView } from '../../src-renderer/components/FileWriteView'

let root: Root | null = null
let host: HTMLElement | null = null
beforeAll(() => {
  ;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
})
afterEach(() => {
  act(() => root?.unmount())
  host?.remove()
  root = null
})

function render(el: React.ReactElement): HTMLElement {
  host = document.createElement('div')
  document.body.append(host)
  root = createRoot(host)
  act(() => root!.render(el))
  return host
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n'
const rows = (el: HTMLElement) => el.querySelectorAll('.diff-line').length
/** The diff of a write that changes /w/a.txt from `before` to `after`, and its table. */
function diffOf(before: string, after: string) {
  const el = render(
    <FileWriteView file={{ path: '/w/a.txt', exists: true, bytes: before.length, before }} content={after} />,
  )
  return { el, table: el.querySelector<HTMLElement>('[role="table"]')! }
}

describe('FileWriteView', () => {
  it('draws only the rows in view of a long file, and the others as it scrolls', () => {
    const el = render(<FileWriteView file={{ path: '/w/big.txt', exists: false }} content={lines(20_000)} />)
    expect(el.textContent).toContain('New file · 20000 lines')
    const table = el.querySelector<HTMLElement>('[role="table"]')!
    expect(table.getAttribute('aria-rowcount')).toBe('20000')
    // Before the box has a size (no layout here), its first rows.
    expect(rows(el)).toBe(40)
    expect(el.textContent).toContain('line 40')
    // A 320 px box scrolled to the end: the last rows, and the spacers keep the full height.
    Object.defineProperty(table, 'clientHeight', { value: 320 })
    table.scrollTop = 20_000 * 19 - 320
    act(() => table.dispatchEvent(new Event('scroll')))
    expect(el.textContent).toContain('line 20000')
    const first = el.querySelector('.diff-line')!.getAttribute('aria-rowindex')
    expect(Number(first)).toBeGreaterThan(19_900)
    expect(rows(el)).toBeLessThan(100)
    const last = el.querySelectorAll('.diff-line')[rows(el) - 1]!
    expect(last.getAttribute('aria-rowindex')).toBe('20000')
    const [top, bottom] = [...table.querySelectorAll<HTMLElement>('[aria-hidden="true"]')]
    expect(parseFloat(top!.style.height) + rows(el) * 19 + parseFloat(bottom!.style.height)).toBe(20_000 * 19)
  })

  it('opens a folded run in place, and the rows after it move down', () => {
    const before = lines(30)
    const after = before.replace('line 15\n', 'line fifteen\n')
    const { el, table } = diffOf(before, after)
    expect(el.textContent).toContain('Changes: +1 −1')
    const folds = [...el.querySelectorAll('button')].map((b) => b.textContent)
    expect(folds).toEqual(['Show 11 unchanged lines', 'Show 12 unchanged lines'])
    expect(table.getAttribute('aria-rowcount')).toBe('10')
    act(() => el.querySelector('button')!.click())
    expect(table.getAttribute('aria-rowcount')).toBe('20')
    expect(el.textContent).toContain('line 1')
    expect([...el.querySelectorAll('button')].map((b) => b.textContent)).toEqual(['Show 12 unchanged lines'])
    expect(el.querySelector('.diff-del')!.getAttribute('aria-rowindex')).toBe('15')
  })

  it('keeps focus in the diff when a focused fold scrolls out of the drawn rows, or opens', () => {
    const before = lines(3000)
    // A change every 20 lines: a fold between each two, ~1,350 rows in all.
    const after = before.replace(/line (\d*[02468]0)\n/g, 'line $1 changed\n')
    const { el, table } = diffOf(before, after)
    Object.defineProperty(table, 'clientHeight', { value: 320 })
    act(() => table.dispatchEvent(new Event('scroll')))
    const fold = el.querySelector('button')!
    act(() => fold.focus())
    expect(document.activeElement).toBe(fold)
    table.scrollTop = 20_000
    act(() => table.dispatchEvent(new Event('scroll')))
    expect(fold.isConnected).toBe(false)
    expect(document.activeElement).toBe(table)
    // A fold that opens is replaced by its lines: focus stays in the diff too.
    const next = el.querySelector('button')!
    act(() => next.focus())
    act(() => next.click())
    expect(document.activeElement).toBe(table)
  })

  it('says why there is no diff for a file it could not compare', () => {
    const el = render(
      <FileWriteView
        file={{ path: '/w/a.bin', exists: true, bytes: 2048, before_omitted: 'binary' }}
        content="x"
      />,
    )
    expect(el.textContent).toContain('Replaces the file (2.0 KB) · 1 line')
    expect(el.textContent).toContain('The current file is not text')
  })

  it('says so when the write changes nothing', () => {
    const el = render(
      <FileWriteView file={{ path: '/w/a', exists: true, bytes: 2, before: 'a\n' }} content={'a\n'} />,
    )
    expect(el.textContent).toContain('No changes: the file already has this content')
  })
})
