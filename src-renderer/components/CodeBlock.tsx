import { memo, useEffect, useMemo, useRef, useState } from 'react'
import { PIECE_CHARS } from '../lib/blocks'
import { widestLine } from '../lib/columns'
import { highlight, MAX_HIGHLIGHT } from '../lib/highlight'
import { copyText } from '../lib/clipboard'
import { nearWatcher } from '../lib/near'

/** A block is highlighted once it comes near the viewport: a reply with hundreds of blocks paints as fast as plain text. */
const whenNear = nearWatcher('600px 0px')

/** A fenced code block: highlighted when the language is known, with a copy button. */
export const CodeBlock = memo(function CodeBlock({ code, language }: { code: string; language?: string }) {
  const [copied, setCopied] = useState(false)
  const ref = useRef<HTMLDivElement>(null)
  const [near, setNear] = useState(false)
  const html = useMemo(() => (near ? highlight(code, language) : null), [near, code, language])
  const long = useMemo(() => (code.length > MAX_HIGHLIGHT ? longCode(code) : null), [code])

  useEffect(() => {
    const el = ref.current
    if (near || !el || !language) return
    return whenNear(el, () => setNear(true))
  }, [near, language])

  useEffect(() => {
    if (!copied) return
    const timer = setTimeout(() => setCopied(false), 1500)
    return () => clearTimeout(timer)
  }, [copied])

  return (
    <div ref={ref} className="code-block">
      <div className="code-head">
        <span className="code-lang">{language ?? 'text'}</span>
        <button
          type="button"
          className="code-copy"
          aria-label={copied ? 'Copied' : 'Copy code'}
          onClick={() => void copyText(code).then((ok) => setCopied(ok))}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <pre>
        {html !== null ? (
          <code className={`hljs language-${language}`} dangerouslySetInnerHTML={{ __html: html }} />
        ) : long ? (
          <code className="code-pieces" style={{ minWidth: `${long.columns}ch` }}>
            {long.pieces.map((piece, i) => (
              <span
                key={i}
                className="code-piece"
                style={{ containIntrinsicBlockSize: `auto ${piece.lines}lh` }}
              >
                {piece.text}
              </span>
            ))}
          </code>
        ) : (
          <code>{code}</code>
        )}
      </pre>
    </div>
  )
})

/**
 * Code too long to highlight, in pieces of whole lines (PIECE_CHARS or a little more), each laid
 * out only near the view (code-block.css), with its height in lines until then: a 50,000-line
 * file opens and scrolls like a short one. A piece never ends inside a line, which would show as
 * two. The widest line sets the width, so the block scrolls sideways as far whichever pieces are
 * laid out.
 */
function longCode(code: string) {
  const pieces: Array<{ text: string; lines: number }> = []
  for (let from = 0; from < code.length;) {
    const at = code.indexOf('\n', from + PIECE_CHARS)
    const end = at < 0 ? code.length : at + 1
    const text = code.slice(from, end)
    let lines = text.endsWith('\n') ? 0 : 1
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', nl + 1)) lines++
    pieces.push({ text, lines })
    from = end
  }
  return { pieces, columns: widestLine(code) }
}
