import { performance } from 'node:perf_hooks'
import type { Runtime } from '../runtime'

/**
 * The longest the host's event loop is held while one reply of `words` words streams at full
 * speed (the scripted model), is committed, and is then indexed for search in pieces: every
 * window's streams and requests wait that long. Watched by a 1 ms timer; answers the longest
 * block before the turn ended (the stream and its flushes), at its end (the final commit), and
 * after it until the reply is found by its last word (the index's pieces).
 */
async function longReplyBlocks(
  rt: Runtime,
  words: number,
): Promise<{ streaming: number; end: number; indexing: number; indexedMs: number }> {
  const s = await rt.sessions.create()
  const blocks: Array<{ start: number; end: number }> = []
  let last = performance.now()
  const watch = setInterval(() => {
    const now = performance.now()
    blocks.push({ start: last, end: now })
    last = now
  }, 1)
  try {
    const turn = await s.prompt({ query: `/stream ${words} 0` })
    await turn.finished
    const ended = performance.now()
    // Searched in process: the store's own query, as the search thread runs it.
    while (rt.store.search(`word${words}`, 1).length === 0) await new Promise((r) => setTimeout(r, 5))
    const indexed = performance.now()
    // A block is seen when the timer runs after it: the one the search ended in, too.
    await new Promise((r) => setTimeout(r, 20))
    const longest = (xs: typeof blocks) => Math.max(0, ...xs.map((b) => b.end - b.start))
    // The turn ended in the block that holds its final commit (and what the turn's end does).
    const end = blocks.find((b) => b.start < ended && b.end >= ended)
    return {
      streaming: longest(blocks.filter((b) => b.end <= (end?.start ?? ended))),
      end: end ? end.end - end.start : 0,
      indexing: longest(blocks.filter((b) => b.start >= ended && b.start < indexed)),
      indexedMs: indexed - ended,
    }
  } finally {
    clearInterval(watch)
  }
}

/**
 * The host's event loop while a 100,000-word reply streams at full speed, is committed and is
 * indexed (issue 10: the app never freezes), and at 1,000,000 words for reference.
 */
export async function longReply(
  open: () => Runtime,
  line: (name: string, value: string, target: string, ok: boolean) => void,
): Promise<void> {
  for (const words of [100_000, 1_000_000]) {
    const rt = open()
    try {
      const b = await longReplyBlocks(rt, words)
      const worst = Math.max(b.streaming, b.end, b.indexing)
      line(
        `longest event-loop block, a ${words.toLocaleString('en-US')}-word reply at full speed`,
        `${worst.toFixed(1)} ms (streaming ${b.streaming.toFixed(1)} ms, its final commit ${b.end.toFixed(1)} ms, indexing its pieces ${b.indexing.toFixed(1)} ms; found by its last word ${b.indexedMs.toFixed(0)} ms after its end)`,
        words <= 100_000 ? '≤ 50 ms, no long task' : 'none, for reference',
        words > 100_000 || worst <= 50,
      )
    } finally {
      await rt.close()
    }
  }
}
