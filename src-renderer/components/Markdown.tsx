import {
  isValidElement,
  memo,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type CSSProperties,
  type ReactNode,
} from 'react'
import { flushSync } from 'react-dom'
import ReactMarkdown, { type Components } from 'react-markdown'
import rehypeKatex from 'rehype-katex'
import remarkGfm from 'remark-gfm'
import remarkMath from 'remark-math'
import 'katex/dist/katex.min.css'
import {
  blockModes,
  fencedCode,
  LONG_TEXT,
  plainParagraph,
  sectionStarts,
  textPieces,
  type BlockMode,
  type TextPieces,
} from '../lib/blocks'
import { tailToParse } from '../lib/list-cuts'
import { MAX_BLOCK, splitBlocksIncremental, type BlockSplit } from '../lib/split-blocks'
import { createWorkQueue, whenIdle } from '../lib/work-queue'
import { addedSince } from '../state/growth'
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
  // A numbered list is indented for its widest number, so that number is drawn inside its box:
  // a long reply's sections clip what is drawn outside them (content-visibility, markdown.css),
  // and a fixed indent cut `114.` to `4.`.
  ol: ({ node, start, style, ...props }) => {
    const items = node?.children.filter((c) => c.type === 'element' && c.tagName === 'li').length ?? 0
    const digits = String(Math.max(1, (start ?? 1) + items - 1)).length
    return (
      <ol start={start} style={{ ...style, paddingInlineStart: `calc(${digits}ch + 0.9em)` }} {...props} />
    )
  },
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

/** A streaming reply's last block is parsed once it has not changed for this long (ms). */
const SETTLE_MS = 150

/**
 * A streaming reply's growing tail is shown as markdown while it grows. Up to this many
 * characters (a paragraph, a short list) it is parsed at every change: a few milliseconds.
 */
const TAIL_EVERY_CHANGE = 1_000

/**
 * A longer tail is parsed again at most once per this many milliseconds per character, and shows
 * its last parse, a little behind the stream, until then. Parsing costs about 3.5 ms per 1,000
 * characters of dense markdown (a list of bold and code; ReactMarkdown with this app's plugins),
 * so the tail takes about a quarter of the main thread at most.
 */
const TAIL_MS_PER_CHAR = 0.015

/**
 * A growing tail longer than this (characters: one markdown block this long, a huge table or
 * list, whose parse would take ~30 ms) is shown as its source until it is finished.
 */
const TAIL_PARSE_MAX = 8_000

/**
 * A finished tail that was shown parsed is parsed again at once up to this many characters
 * (~10 ms). A longer one shows its last parse, or its source if that went past its end, until
 * the queue gets to it.
 */
const REPARSE_MAX = 3_000

/** Markdown rendered by the parser, memoised on its text (a tail shown behind the stream is not parsed again). */
const Parsed = memo(function Parsed({ text }: { text: string }) {
  return (
    <ReactMarkdown remarkPlugins={plugins} rehypePlugins={rehypePlugins as never} components={components}>
      {text}
    </ReactMarkdown>
  )
})

/**
 * One block, memoised on its text and mode. `now` parses it in this render; `queue` shows it
 * as plain text until the parsing queue gets to it (then it stays parsed); `hold` is a streaming
 * reply's growing tail: prose as its paragraph, a code block as code (highlighted once it is
 * finished), other markdown parsed at most every few frames (TAIL_MS_PER_CHAR).
 */
const Block = memo(function Block({
  text,
  mode,
  joined,
}: {
  text: string
  mode: BlockMode
  joined: boolean
}) {
  const [parsed, setParsed] = useState<string | null>(null)
  const growing = mode === 'hold'
  // Plain prose renders as markdown would, without the parser (the parser's own set-up is most
  // of the time a short reply takes to render). A streaming tail that is plain prose so far
  // renders as its finished paragraph will (its trailing spaces are not shown either way):
  // when it is finished, nothing changes in the DOM, and its text is not laid out again.
  const plain = plainParagraph(growing ? text.replace(/ +$/, '') : text)
  // A block that is one fenced code block needs no parser either; while it grows it is drawn as
  // code, not highlighted (that would highlight its whole text again with each change).
  const fence = useMemo(() => fencedCode(text), [text])
  // The text this block was last shown parsed as while it grew (a cache, not state: it only
  // says what the last render showed).
  const [grown] = useState<{ text: string | null; at: number }>(() => ({ text: null, at: -Infinity }))
  const parseTail = growing && plain === null && fence === null && text.length <= TAIL_PARSE_MAX
  if (parseTail) {
    const now = performance.now()
    if (
      grown.text === null ||
      text.length <= TAIL_EVERY_CHANGE ||
      now - grown.at >= text.length * TAIL_MS_PER_CHAR ||
      // Not grown but rewritten: never the parse of another text.
      !text.startsWith(grown.text)
    ) {
      grown.text = tailToParse(text)
      grown.at = now
    }
  } else if (growing) grown.text = null
  // A finished block that was shown parsed as the tail: a longer one keeps showing that parse
  // (its last words a moment behind) until the queue parses it whole, if the parse is of a
  // prefix of it. (It may hold a line break more than the finished block, which ends at its last.)
  const behind = mode === 'queue' && grown.text !== null && text.startsWith(grown.text.replace(/\n+$/, ''))
  // It is parsed again at once if a parse of it fits in a frame: its last words (the frame that
  // ended the stream) would otherwise wait for the queue, which runs in idle periods long enough
  // for the job and so, while anything else draws frames, up to a second later.
  const ready =
    mode === 'now' ||
    parsed === text ||
    plain !== null ||
    fence !== null ||
    (mode === 'queue' && grown.text !== null && text.length <= REPARSE_MAX)
  useEffect(() => {
    if (ready || mode !== 'queue') return
    // Rendered at once, so the queue's budget counts the parse and the commit.
    return parsing.add(() => flushSync(() => setParsed(text)), text.length)
  }, [ready, mode, text])
  // The previous pieces, grown as the text grows (a cache, not state: nothing renders from it).
  const [cut] = useState<{ last: TextPieces | null }>(() => ({ last: null }))
  // A block the next one continues (a list cut between its items): its markdown, with no gap after.
  const parsedAs = (shown: string) =>
    joined ? (
      <div className="md-joined">
        <Parsed text={shown} />
      </div>
    ) : (
      <Parsed text={shown} />
    )
  if (parseTail) return parsedAs(grown.text!)
  if (!ready) {
    // Rather than turning back into its source for that moment.
    if (behind) return parsedAs(grown.text!)
    cut.last = textPieces(cut.last, text)
    return (
      <p className={joined ? 'md-plain md-joined' : 'md-plain'}>
        {cut.last.pieces.map((piece, i) => (
          <span key={i} className="md-piece">
            {piece}
          </span>
        ))}
      </p>
    )
  }
  if (plain !== null) return <p className={joined ? 'md-joined' : undefined}>{plain}</p>
  if (fence !== null) return <CodeBlock code={fence.code} language={fence.language} growing={growing} />
  return parsedAs(text)
})

/** Fired (bubbling) by a streaming reply whose frame brought a section the browser may skip. */
export const SECTIONS_ADDED = 'arbor-md-sections-added'

/**
 * Assistant text as GitHub-flavoured markdown. Raw HTML is shown as literal text, never
 * rendered (react-markdown without rehype-raw); unsafe URLs are dropped by its default transform.
 * A long or streaming reply shows some blocks as plain text for a moment (see `blockModes`);
 * once it settles every block is parsed, a few per frame, the newest first.
 */
export const Markdown = memo(function Markdown({
  text,
  streaming = false,
  source,
}: {
  text: string
  streaming?: boolean
  /** The message part `text` is from: what a delta added is read from it (state/growth.ts), not the whole text. */
  source?: object
}) {
  // The previous split, resumed when the text grows (a streaming reply): each frame scans only
  // the new text, and the finished blocks keep their text, so their memo skips them.
  const [last] = useState<{ split: BlockSplit | null; streamed: boolean }>(() => ({
    split: null,
    streamed: false,
  }))
  // Only what was added to the text is read, when the source says (a new part comes with each
  // new text, so `source` is not a dependency of its own).
  const blocks = useMemo(() => {
    // A cache, not state: nothing renders from it.
    const prev = last.split
    const added = prev && source ? addedSince(source, prev.text) : undefined
    last.split = splitBlocksIncremental(prev, text, MAX_BLOCK, added)
    return last.split.blocks
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [last, text])
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
  // A streaming reply lays out only its blocks near the view from its first frame: switched on
  // when it grew past LONG_TEXT, every block was laid out again in that frame (7-15 ms at
  // 20,000 characters, with the stream going on). Its blocks were each laid out once, so the
  // sizes they keep off screen are their own. A reply that ends shorter than LONG_TEXT is laid
  // out whole once, as it shows from then on (a few milliseconds at most).
  const long = text.length > LONG_TEXT || streaming
  // In sections whether long or not: a reply that streamed and ended shorter than LONG_TEXT keeps
  // its elements (only the class changes), so its end does not lay every block out anew.
  const starts = sectionStarts(blocks)
  // A frame of a fast stream can bring a finished section besides the growing one (or a reply
  // first shown mid-stream several, or its last frame a section or two): the view that follows
  // the reply must be at its new end before the browser decides which new sections are near the
  // view, or it skips one that the view then shows, and paints an empty box for a frame
  // (markdown.css). The transcript moves the view there when it hears of it. A streaming
  // reply's growing section is never skipped: a frame that only grows it, or brings the next
  // one, leaves the view to the browser's scroll anchor as before.
  const root = useRef<HTMLDivElement>(null)
  const [shown] = useState({ sections: 0, streaming: false })
  useLayoutEffect(() => {
    const skippable = starts.length - shown.sections - (streaming ? 1 : 0)
    const streamed = streaming || shown.streaming
    shown.sections = starts.length
    shown.streaming = streaming
    if (streamed && skippable > 0) root.current?.dispatchEvent(new Event(SECTIONS_ADDED, { bubbles: true }))
  })
  return (
    <div ref={root} className={long ? 'markdown markdown-long' : 'markdown'} dir="auto">
      {starts.map((start, k) => {
        const end = starts[k + 1] ?? blocks.length
        return (
          <Section
            key={k}
            texts={blocks.slice(start, end)}
            modes={modes.slice(start, end)}
            final={end === blocks.length}
            growing={streaming && end === blocks.length}
          />
        )
      })}
    </div>
  )
})

/**
 * A run of a text's blocks (SECTION_CHARS): in a long text, laid out and painted only near the
 * view (markdown.css). A block cut from a paragraph too long to lay out as one (lib/split-blocks.ts)
 * ends without a line break: the next block goes on with the same paragraph, with no gap between.
 * Memoised on its blocks' texts and modes: a streaming reply's finished sections are skipped by
 * React in every frame, as they are by the browser off screen.
 */
const Section = memo(
  function Section({
    texts,
    modes,
    final,
    growing,
  }: {
    texts: string[]
    modes: BlockMode[]
    final: boolean
    growing: boolean
  }) {
    // Its size until it is first laid out (a long reply's sections far from the view never are):
    // about a line per 80 characters. Not while its text grows (the last section of a streaming
    // reply): that would change its style in every frame, and it is on screen, its size its own.
    let style: CSSProperties | undefined
    if (!growing) {
      let chars = 0
      for (const t of texts) chars += t.length
      style = { containIntrinsicBlockSize: `auto ${Math.max(1, Math.round(chars / 80))}lh` }
    }
    // Its last block continues in the next section (a paragraph cut in blocks): no gap either.
    const joined = !final && !texts[texts.length - 1]!.endsWith('\n')
    return (
      <div className={`md-section${joined ? ' md-joined' : ''}${growing ? ' md-growing' : ''}`} style={style}>
        {texts.map((b, i) => (
          <Block
            key={i}
            text={b}
            mode={modes[i]!}
            joined={(i < texts.length - 1 || joined) && !b.endsWith('\n')}
          />
        ))}
      </div>
    )
  },
  (a, b) =>
    a.final === b.final && a.growing === b.growing && same(a.texts, b.texts) && same(a.modes, b.modes),
)

function same<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
