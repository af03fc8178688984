import { memo } from 'react'
import ReactMarkdown, { type Components } from 'react-markdown'
import remarkGfm from 'remark-gfm'

const plugins = [remarkGfm]

// Links leave the app: a new window, which main turns into the system browser (or refuses).
const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer noopener" />,
}

/**
 * Assistant text as GitHub-flavoured markdown. Raw HTML is shown as literal text, never
 * rendered (react-markdown without rehype-raw); unsafe URLs are dropped by its default transform.
 */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={plugins} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  )
})
