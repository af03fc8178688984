/**
 * Fills a data folder with sessions and messages at bench sizes, straight through the store (one
 * transaction per chunk, the full-text index kept as at write time), much faster than real turns.
 * Used by the bench and by the UI bench (scripts/ui-bench.mjs) before a host is started on it.
 *
 *   node out/main/bench-seed.js --data-dir DIR [--sidebar 2000] [--chat "Big:100000"]…
 *     [--chat "Rich:1:rich"] [--chat "Plain:1:plain-like-rich"]
 *
 * Prints one JSON line: { "sidebar": n, "chats": { title: session_id, … } }.
 */
import { newId } from '../../src-shared/ids'
import type { MessagePart, SessionMessage } from '../../src-shared/types'
import { openRuntime, type Runtime } from '../runtime'
import { snapshotState } from '../runtime/session/checkpoints'

/** What one chat's messages hold. */
export type SeedContent =
  /** Short alternating user / assistant texts. */
  | 'short'
  /** Alternating questions and answers of a few hundred characters, from a varied vocabulary. */
  | 'prose'
  /** One assistant reply with 500 fenced code blocks and 200 markdown tables. */
  | 'rich'
  /** One assistant reply of the same length as 'rich', in plain paragraphs. */
  | 'plain-like-rich'

export interface SeedChat {
  title: string
  messages: number
  content?: SeedContent
}

const CHUNK = 5_000

export function seedMessage(
  session_id: string,
  i: number,
  text: string,
  at = Date.now(),
): Omit<SessionMessage, 'seq'> {
  const parts: MessagePart[] = [{ type: 'text', part_id: newId('prt'), text }]
  return {
    message_id: newId('msg'),
    session_id,
    role: i % 2 ? 'assistant' : 'user',
    kind: 'text',
    status: 'complete',
    revision: 1,
    created_at: at,
    updated_at: at,
    parts,
  }
}

const LANGS = ['ts', 'python', 'rust', 'go', 'json']

/** A reply with 500 code blocks and 200 tables, about 300 kB of markdown. */
export function richReply(): string {
  const out: string[] = []
  for (let i = 0; i < 500; i++) {
    out.push(`Step ${i}: here is how it works, with a short explanation before the code.`)
    const lang = LANGS[i % LANGS.length]
    const code = Array.from({ length: 8 }, (_, l) => `const value${l} = compute(${i}, ${l}) // line ${l}`)
    out.push(['```' + lang, ...code, '```'].join('\n'))
    if (i % 5 < 2) {
      const rows = Array.from({ length: 5 }, (_, r) => `| row ${r} | ${i * r} | cell text ${r} |`)
      out.push(['| name | value | note |', '| --- | --- | --- |', ...rows].join('\n'))
    }
  }
  return out.join('\n\n')
}

/** Plain paragraphs of the same length as richReply(). */
export function plainLike(text: string): string {
  const para = 'The quick brown fox jumps over the lazy dog, and the answer continues plainly. '
  const out: string[] = []
  let n = 0
  while (n < text.length) {
    const p = para.repeat(4)
    out.push(p)
    n += p.length + 2
  }
  return out.join('\n\n')
}

const WORDS = (
  'the a of to and in is it that for on with as was at by this be from or have an not are but ' +
  'session model reply question answer file folder tool approve deny fork history search window ' +
  'network disk memory token stream delta branch commit query index sqlite worker thread render ' +
  'python rust typescript function value error retry timeout cache page list table code block'
).split(' ')

/** A few hundred characters of varied words: every message differs, common words are common. */
export function prose(i: number): string {
  const out: string[] = [`Message ${i}:`]
  let x = (i * 2654435761) >>> 0
  for (let w = 0; w < 50; w++) {
    x = (x * 1103515245 + 12345) >>> 0
    out.push(WORDS[x % WORDS.length]!)
  }
  return out.join(' ') + '.'
}

function textFor(content: SeedContent, i: number): string {
  if (content === 'short') return `message number ${i} with a little text`
  if (content === 'prose') return prose(i)
  const rich = richReply()
  return content === 'rich' ? rich : plainLike(rich)
}

/**
 * Inserts `count` messages into a session, CHUNK per transaction, and a checkpoint after each
 * reply, as a real turn leaves one (a snapshot naming the session's state): about one snapshot
 * per two messages, so a database of a million messages has half a million of them.
 */
export function fillSession(
  rt: Runtime,
  session_id: string,
  count: number,
  content: SeedContent = 'short',
): void {
  const row = rt.store.getSession(session_id)
  if (!row) throw new Error(`no session ${session_id} to fill`)
  const state = snapshotState(row)
  let head = rt.store.get_session_head(session_id)?.snapshot_id ?? null
  for (let start = 0; start < count; start += CHUNK) {
    rt.store.transaction(() => {
      for (let i = start; i < Math.min(count, start + CHUNK); i++) {
        // A single-message chat is the assistant's reply, after its question.
        const many = content === 'short' || content === 'prose'
        const m = rt.store.insertMessage(
          seedMessage(session_id, many ? i : 1, textFor(content, many ? i : 1)),
        )
        if (m.role !== 'assistant') continue
        head = rt.store.commit_session_snapshot({
          session_id,
          expected_snapshot_id: head,
          head_seq: m.seq,
          reason: 'step',
          step: 0,
          state,
        }).snapshot_id
      }
    })
  }
}

export async function seed(
  dataDir: string,
  opts: { sidebar?: number; chats?: SeedChat[] },
): Promise<{ sidebar: number; chats: Record<string, string> }> {
  const rt = openRuntime({ dataDir, log: () => {} })
  try {
    const chats: Record<string, string> = {}
    for (let i = 0; i < (opts.sidebar ?? 0); i++) {
      const s = await rt.sessions.create({ title: `Chat ${i + 1}` })
      fillSession(rt, s.session_id, 2)
    }
    for (const c of opts.chats ?? []) {
      const s = await rt.sessions.create({ title: c.title })
      if (c.content === 'rich' || c.content === 'plain-like-rich')
        rt.store.insertMessage(seedMessage(s.session_id, 0, 'Show me everything.'))
      fillSession(rt, s.session_id, c.messages, c.content)
      chats[c.title] = s.session_id
    }
    return { sidebar: opts.sidebar ?? 0, chats }
  } finally {
    await rt.close()
  }
}

function parseArgs(argv: string[]): { dataDir: string; sidebar: number; chats: SeedChat[] } {
  let dataDir = ''
  let sidebar = 0
  const chats: SeedChat[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--data-dir') dataDir = argv[++i] ?? ''
    else if (a === '--sidebar') sidebar = Number(argv[++i])
    else if (a === '--chat') {
      const [title, n, content] = (argv[++i] ?? '').split(':')
      if (!title || !Number.isInteger(Number(n)))
        throw new Error(`--chat wants "Title:count[:content]", got ${argv[i]}`)
      chats.push({ title, messages: Number(n), content: (content as SeedContent) || 'short' })
    } else throw new Error(`unknown argument ${a}`)
  }
  if (!dataDir) throw new Error('--data-dir DIR is required')
  if (!Number.isInteger(sidebar) || sidebar < 0) throw new Error('--sidebar wants a count')
  return { dataDir, sidebar, chats }
}

if (typeof require !== 'undefined' && require.main === module) {
  const args = parseArgs(process.argv.slice(2))
  seed(args.dataDir, args)
    .then((r) => console.log(JSON.stringify(r)))
    .catch((err: unknown) => {
      console.error(`seed failed: ${err instanceof Error ? err.message : String(err)}`)
      process.exitCode = 1
    })
}
