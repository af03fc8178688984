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

describe('FileWriteView', () => {
  it('draws a long new file in part, and the rest on request', () => {
    const el = render(<FileWriteView file={{ path: '/w/big.txt', exists: false }} content={lines(1500)} />)
    expect(el.textContent).toContain('New file · 1500 lines')
    expect(rows(el)).toBe(1000)
    const more = [...el.querySelectorAll('button')].find((b) => b.textContent === 'Show the other 500 rows')!
    act(() => more.click())
    expect(rows(el)).toBe(1500)
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
