import { isValidElement, memo, useMemo, useState, type ReactNode } from 'react'
import ReactMarkdown, { type Components } from 'react-markdown'
import remarkGfm from 'remark-gfm'
import { splitBlocksIncremental, type BlockSplit } from '../lib/blocks'
import { CodeBlock } from './CodeBlock'

const plugins = [remarkGfm]

function textOf(node: ReactNode): string {
  if (typeof node === 'string' || typeof node === 'number') return String(node)
  if (Array.isArray(node)) return node.map(textOf).join('')
  if (isValidElement<{ children?: ReactNode }>(node)) return textOf(node.props.children)
  return ''
}

const components: Components = {
  // Links leave the app: a new window, which main turns into the system browser (or refuses).
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer noopener" />,
  // Fenced and indented code: highlighted, with a copy button.
  pre: ({ children }) => {
    const code = isValidElement<{ className?: string; children?: ReactNode }>(children) ? children : null
    const language = /language-([\w+#.-]+)/.exec(code?.props.className ?? '')?.[1]
    const text = textOf(code?.props.children ?? children).replace(/\n$/, '')
    return <CodeBlock code={text} language={language} />
  },
}

/** One block, memoised on its text: a streaming reply re-parses only its growing last block. */
const Block = memo(function Block({ text }: { text: string }) {
  return (
    <ReactMarkdown remarkPlugins={plugins} components={components}>
      {text}
    </ReactMarkdown>
  )
})

/**
 * Assistant text as GitHub-flavoured markdown. Raw HTML is shown as literal text, never
 * rendered (react-markdown without rehype-raw); unsafe URLs are dropped by its default transform.
 */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  // The previous split, resumed when the text grows (a streaming reply): each frame scans only
  // the new text, and the finished blocks keep their text, so their memo skips them.
  const [last] = useState<{ split: BlockSplit | null }>(() => ({ split: null }))
  const blocks = useMemo(() => {
    // A cache, not state: nothing renders from it.
    last.split = splitBlocksIncremental(last.split, text)
    return last.split.blocks
  }, [last, text])
  return (
    <div className="markdown">
      {blocks.map((b, i) => (
        <Block key={i} text={b} />
      ))}
    </div>
  )
})
