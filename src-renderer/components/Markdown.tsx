import { isValidElement, memo, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import { flushSync } from 'react-dom'
import ReactMarkdown, { type Components } from 'react-markdown'
import rehypeKatex from 'rehype-katex'
import remarkGfm from 'remark-gfm'
import remarkMath from 'remark-math'
import 'katex/dist/katex.min.css'
import {
  blockEdges,
  blockGaps,
  blockModes,
  splitBlocksIncremental,
  type BlockMode,
  type BlockSplit,
  type Edge,
} from '../lib/blocks'
import { createWorkQueue, whenIdle } from '../lib/work-queue'
import { CodeBlock } from './CodeBlock'

const plugins = [remarkGfm, remarkMath]
/** Math ($…$ inline, $$…$$ display) typeset by KaTeX; a formula it cannot parse shows as its source, in red. */
const rehypePlugins = [[rehypeKatex, { throwOnError: false, strict: 'ignore' }]] as const

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

/** Blocks waiting to be parsed, a few milliseconds' worth in each idle period. */
const parsing = createWorkQueue({ schedule: whenIdle, now: () => performance.now(), budget: 6 })

/**
 * A block born this far (characters) above the end of a streaming reply is laid out only once
 * the reader scrolls to it: a burst of text (a frame that came late gets more) then costs the
 * frame what the viewport shows, not every block the burst brought.
 */
const BURY_CHARS = 6_000

/**
 * Height per character of plain text (px), learned from the plain blocks laid out so far: the
 * size a buried block is given until it is laid out.
 */
let pxPerChar = 0
const sizes =
  typeof ResizeObserver === 'undefined'
    ? null
    : new ResizeObserver((entries) => {
        for (const e of entries) {
          sizes?.unobserve(e.target)
          const chars = e.target.textContent?.length ?? 0
          const rate = e.contentRect.height / Math.max(1, chars)
          if (chars >= 400 && rate > 0) pxPerChar = pxPerChar === 0 ? rate : 0.8 * pxPerChar + 0.2 * rate
        }
      })
/** What a plain block of `chars` characters is expected to measure (px). */
const estimateHeight = (chars: number) => Math.max(24, Math.round(chars * (pxPerChar || 0.27)))

/** A streaming reply's last block is parsed once it has not changed for this long (ms). */
const SETTLE_MS = 150

/**
 * One block, memoised on its text, mode and gap. `now` parses it in this render; `queue` shows
 * it as plain text until the parsing queue gets to it (then it stays parsed); `hold` shows it as
 * plain text (a streaming reply's growing tail: parsing it every frame is what made frames late).
 *
 * A block of a streaming reply is a box of its own, which the browser stops laying out and
 * painting while it is far from the viewport (`content-visibility: auto`, from the frame after
 * its first layout, so its size is known and kept): a reply growing below thousands of lines,
 * its blocks parsed off-screen, then costs a frame only what is near the viewport.
 */
const Block = memo(function Block({
  text,
  mode,
  gap,
  buried,
}: {
  text: string
  mode: BlockMode
  gap: string
  /**
   * Born far above the end of a streaming reply: skipped at once, at this height (px) until laid
   * out; 0 for a block of a streaming reply (skipped when far from the frame after it is first
   * laid out); -1 for a block of a settled one, which has no box of its own (hundreds of boxes
   * cost a long reply just opened ~15% of its first paint, and making them skippable once laid
   * out rebuilt their layout: 150 ms).
   */
  buried: number
}) {
  const [parsed, setParsed] = useState<string | null>(null)
  const ready = mode === 'now' || parsed === text
  const ref = useRef<HTMLDivElement>(null)
  const [born] = useState(buried)
  useEffect(() => {
    if (ready || mode !== 'queue') return
    // Rendered at once, so the queue's budget counts the parse and the commit.
    return parsing.add(() => flushSync(() => setParsed(text)), text.length)
  }, [ready, mode, text])
  useEffect(() => {
    const el = ref.current
    if (!el || born !== 0 || typeof requestAnimationFrame !== 'function') return
    if (!ready) sizes?.observe(el)
    // Not in React's className: once set it stays, whatever the block renders next.
    const frame = requestAnimationFrame(() => el.classList.add('md-far'))
    return () => {
      cancelAnimationFrame(frame)
      sizes?.unobserve(el)
    }
    // Once, after the first layout.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [])
  const content = ready ? (
    <ReactMarkdown remarkPlugins={plugins} rehypePlugins={rehypePlugins as never} components={components}>
      {text}
    </ReactMarkdown>
  ) : (
    <p className="md-plain">{text}</p>
  )
  // A settled reply's blocks are never skipped: their elements go straight into the reply (a box
  // per block costs a reply of hundreds of blocks a tenth of its first paint).
  if (born < 0) return content
  return (
    <div
      ref={ref}
      className={`md-block${gap ? ` ${gap}` : ''}${born > 0 ? ' md-far' : ''}`}
      style={born > 0 ? { containIntrinsicSize: `auto none auto ${born}px` } : undefined}
    >
      {content}
    </div>
  )
})

/**
 * Assistant text as GitHub-flavoured markdown. Raw HTML is shown as literal text, never
 * rendered (react-markdown without rehype-raw); unsafe URLs are dropped by its default transform.
 * A long or streaming reply shows some blocks as plain text for a moment (see `blockModes`);
 * once it settles every block is parsed, a few per frame, the newest first.
 */
export const Markdown = memo(function Markdown({
  text,
  streaming = false,
}: {
  text: string
  streaming?: boolean
}) {
  // The previous split, resumed when the text grows (a streaming reply): each frame scans only
  // the new text, and the finished blocks keep their text, so their memo skips them.
  const [last] = useState<{
    split: BlockSplit | null
    streamed: boolean
    buried: number[]
    edges: Array<readonly [Edge, Edge]>
    edgesOf: string[]
  }>(() => ({ split: null, streamed: false, buried: [], edges: [], edgesOf: [] }))
  const blocks = useMemo(() => {
    // A cache, not state: nothing renders from it.
    const before = last.split
    last.split = splitBlocksIncremental(before, text)
    const now = last.split.blocks
    // Blocks new in this render, while streaming, with more than BURY_CHARS after them: buried.
    if (last.split !== before && now.length < last.buried.length) last.buried = []
    const buried = last.buried
    if (streaming && now.length - buried.length > 2) {
      let after = 0
      const at = buried.length
      buried.length = now.length
      for (let i = now.length - 1; i >= at; i--) {
        buried[i] = after >= BURY_CHARS ? estimateHeight(now[i].length) : 0
        after += now[i].length
      }
    } else for (let i = buried.length; i < now.length; i++) buried.push(streaming ? 0 : -1)
    return now
  }, [last, text, streaming])
  // The text as it was when the stream last paused: then the tail may be parsed too.
  const [paused, setPaused] = useState<string | null>(null)
  useEffect(() => {
    if (!streaming) return
    const timer = setTimeout(() => setPaused(text), SETTLE_MS)
    return () => clearTimeout(timer)
  }, [streaming, text])
  // Whether this reply streamed here: then settling queues its last blocks too, so the frame
  // with the last delta does not also parse the end of the reply.
  if (streaming) last.streamed = true
  const modes = blockModes(blocks, { streaming, tailSettled: paused === text, streamed: last.streamed })
  const gaps = useMemo(() => {
    // Each block's edges are read once per text: per frame, only the blocks that changed.
    last.edges.length = last.edgesOf.length = blocks.length
    for (let i = 0; i < blocks.length; i++)
      if (last.edgesOf[i] !== blocks[i]) {
        last.edges[i] = blockEdges(blocks[i])
        last.edgesOf[i] = blocks[i]
      }
    return blockGaps(last.edges)
  }, [last, blocks])
  return (
    <div className="markdown" dir="auto">
      {blocks.map((b, i) => (
        <Block key={i} text={b} mode={modes[i]} gap={gaps[i]} buried={last.buried[i]} />
      ))}
    </div>
  )
})
