import { memo, useEffect, useMemo, useRef, useState } from 'react'
import { highlight } from '../lib/highlight'
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
        ) : (
          <code>{code}</code>
        )}
      </pre>
    </div>
  )
})
