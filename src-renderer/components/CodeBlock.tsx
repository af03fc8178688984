import { memo, useEffect, useState } from 'react'
import { highlight } from '../lib/highlight'
import { copyText } from '../lib/clipboard'

/** A fenced code block: highlighted when the language is known, with a copy button. */
export const CodeBlock = memo(function CodeBlock({ code, language }: { code: string; language?: string }) {
  const [copied, setCopied] = useState(false)
  const html = highlight(code, language)

  useEffect(() => {
    if (!copied) return
    const timer = setTimeout(() => setCopied(false), 1500)
    return () => clearTimeout(timer)
  }, [copied])

  return (
    <div className="code-block">
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
