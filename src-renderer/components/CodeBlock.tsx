import { memo, useEffect, useMemo, useRef, useState } from 'react'
import { widestLine } from '../lib/columns'
import { highlight, MAX_HIGHLIGHT } from '../lib/highlight'
import { copyText } from '../lib/clipboard'
import { nearWatcher } from '../lib/near'
import { LinePieces, linePieces } from './LinePieces'

/** A block is highlighted once it comes near the viewport: a reply with hundreds of blocks paints as fast as plain text. */
const whenNear = nearWatcher('600px 0px')

/**
 * A fenced code block: highlighted when the language is known, with a copy button. `growing`: the
 * tail of a streaming reply, drawn in pieces and highlighted once it is finished (highlighting
 * it at every change would do its whole text again each time; only its last piece changes).
 */
export const CodeBlock = memo(function CodeBlock({
  code,
  language,
  growing = false,
}: {
  code: string
  language?: string
  growing?: boolean
}) {
  const [copied, setCopied] = useState(false)
  const ref = useRef<HTMLDivElement>(null)
  const [near, setNear] = useState(false)
  const html = useMemo(
    () => (near && !growing ? highlight(code, language) : null),
    [near, growing, code, language],
  )
  // Code too long to highlight is drawn in pieces laid out near the view; its widest line sets
  // its width, so it scrolls sideways as far whichever pieces are laid out.
  const long = useMemo(
    () =>
      code.length > MAX_HIGHLIGHT || growing ? { pieces: linePieces(code), columns: widestLine(code) } : null,
    [code, growing],
  )

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
            <LinePieces pieces={long.pieces} />
          </code>
        ) : (
          <code>{code}</code>
        )}
      </pre>
    </div>
  )
})
