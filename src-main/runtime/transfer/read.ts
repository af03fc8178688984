import { ArborError } from '../../../src-shared/errors'
import { breathe } from './breathe'
import {
  CHAT_FILE_FORMAT,
  CHAT_FILE_VERSION,
  chatFile,
  chatFileMessage,
  type ChatFile,
  type ChatFileMessage,
} from './format'

export const AGAIN = 'Export the chat again from Arbor (⋯ → Export as JSON) and import that file.'

/** How much of a file is scanned, and how many messages are read, between turns of the event loop. */
const SCAN_CHARS = 1 << 20
const MESSAGES_PER_TURN = 500

const notJson = () =>
  new ArborError(
    'invalid_request',
    'This file is not an Arbor chat export: it is not JSON. Choose the .json file that Export as JSON saved.',
  )

const damaged = (issues: Array<{ path: PropertyKey[]; message: string }>, prefix: PropertyKey[] = []) =>
  new ArborError(
    'invalid_request',
    `This chat file is damaged (${issues
      .slice(0, 3)
      .map((i) => `${[...prefix, ...i.path].map(String).join('.') || 'the file'}: ${i.message}`)
      .join('; ')}). ${AGAIN}`,
  )

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw notJson()
  }
}

/** The format and version a file claims, refused by name before anything else is read. */
function checkHead(raw: unknown): void {
  const head = raw && typeof raw === 'object' ? (raw as { format?: unknown; version?: unknown }) : {}
  if (head.format !== CHAT_FILE_FORMAT)
    throw new ArborError(
      'invalid_request',
      `This file is not an Arbor chat export (it has no "format": "${CHAT_FILE_FORMAT}"). Choose the .json file that Export as JSON saved.`,
    )
  if (typeof head.version === 'number' && head.version > CHAT_FILE_VERSION)
    throw new ArborError(
      'invalid_request',
      `This chat was exported by a newer Arbor (file format version ${head.version}; this one reads up to ${CHAT_FILE_VERSION}). Update Arbor, then import it again.`,
    )
}

/** A whole chat file read at once: for files the splitter does not take apart. */
function parseWhole(data: string): ChatFile {
  const raw = parseJson(data)
  checkHead(raw)
  const parsed = chatFile.safeParse(raw)
  if (!parsed.success) throw damaged(parsed.error.issues)
  return parsed.data
}

/** A chat file taken apart: the file with every session's messages as `[]`, and their texts. */
export interface Split {
  frame: string
  /** By session (in file order): the text of each message, or undefined for none given. */
  messages: Array<string[] | undefined>
}

const QUOTE = 34
const BACKSLASH = 92

/**
 * Takes a chat file apart, scanning a slice at a time: the `messages` array of each session
 * (file → "sessions" → session → "messages") becomes `[]` in the frame, and each of its
 * elements a text of its own to parse. Only brackets, commas and where strings end are looked
 * at, so anything that is not JSON still is not, and `JSON.parse` says so of the frame or of a
 * message. Null when the file is not laid out as Arbor writes it (a "messages" key written
 * with escapes, say, or twice in one session): it is then read whole.
 *
 * The file may come in pieces (as it crossed a transport): they are scanned one after the
 * other, with only what is not taken apart yet (a message cut by the end of a piece) carried
 * into the next, so a long file is never joined into one string (54 MB: 35 ms at once).
 */
export async function splitChatFile(file: string | readonly string[]): Promise<Split | null> {
  const pieces = typeof file === 'string' ? [file] : file
  const frame: string[] = []
  const messages: Array<string[] | undefined> = []
  let depth = 0
  /** The last string closed at depth 1 (a key of the file) and at depth 3 (of a session). */
  let fileKey = ''
  let sessionKey = ''
  let inSessions = false
  let sessionIsObject = false
  let session = -1
  let current: string[] | null = null
  // Indexes into `text`: the piece being scanned, after what the last one left unfinished.
  let text = ''
  let i = 0
  let frameFrom = 0
  let elementFrom = 0
  let scanned = 0
  /** Where the closing quote of a string cut by a piece is looked for again (not from its start). */
  let resume = -1
  for (const [p, piece] of pieces.entries()) {
    // What is not taken apart yet goes on, in front of the next piece: the frame since it was
    // last put aside, or the message being read.
    if (!current) {
      frame.push(text.slice(frameFrom, i))
      frameFrom = i
    }
    const keep = current ? elementFrom : frameFrom
    text = text.slice(keep) + piece
    i -= keep
    frameFrom -= keep
    elementFrom -= keep
    resume -= keep
    const final = p === pieces.length - 1
    scan: while (i < text.length) {
      if (++scanned >= SCAN_CHARS) {
        await breathe()
        scanned = 0
      }
      const c = text.charCodeAt(i)
      if (c === QUOTE) {
        // Every quote before `resume` was found escaped (a string longer than a piece would be
        // searched again from its start with every piece that adds to it).
        let end = resume > i ? resume : i + 1
        resume = -1
        for (;;) {
          end = text.indexOf('"', end)
          // A string that goes on in the next piece: read again, with it, from where this ended.
          if (end < 0) {
            if (final) return null
            resume = text.length
            break scan
          }
          let slashes = 0
          while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++
          if (slashes % 2 === 0) break
          end++
        }
        if (depth === 1 && end - i < 16) fileKey = text.slice(i, end + 1)
        else if (depth === 3 && end - i < 16) sessionKey = text.slice(i, end + 1)
        else if (depth === 3) sessionKey = ''
        scanned += end - i
        i = end + 1
        continue
      }
      if (c === 123 || c === 91) {
        // { or [
        if (depth === 1 && c === 91) inSessions = fileKey === '"sessions"'
        if (depth === 2 && inSessions) {
          sessionIsObject = c === 123
          if (sessionIsObject) session++
        }
        if (depth === 3 && c === 91 && inSessions && sessionIsObject && sessionKey === '"messages"') {
          if (messages[session] !== undefined) return null
          current = []
          messages[session] = current
          frame.push(text.slice(frameFrom, i + 1))
          elementFrom = i + 1
        }
        depth++
      } else if (c === 125 || c === 93) {
        // } or ]
        if (depth === 4 && current) {
          if (c !== 93) return null
          const last = text.slice(elementFrom, i)
          if (current.length > 0 || last.trim() !== '') current.push(last)
          current = null
          frameFrom = i
        }
        if (depth === 2) inSessions = false
        if (--depth < 0) return null
      } else if (c === 44 && depth === 4 && current) {
        // , between two messages
        current.push(text.slice(elementFrom, i))
        elementFrom = i + 1
      }
      i++
    }
  }
  if (depth !== 0 || current) return null
  frame.push(text.slice(frameFrom))
  return { frame: frame.join(''), messages }
}

/**
 * A chat file opened: its sessions (with `messages` empty), how many messages each has, and the
 * messages of each, parsed and checked as they are asked for — so an import holds a few hundred
 * at a time, not the whole file (100,000 parsed messages kept alive made each of V8's young-
 * generation collections copy them: 30–60 ms pauses at a time, at full scale).
 */
export interface ChatFileReader {
  /** The file, each session's `messages` empty. */
  file: ChatFile
  counts: number[]
  /** Session `k`'s messages in file order, a few hundred per turn of the event loop. */
  messages(k: number): AsyncGenerator<ChatFileMessage>
}

/**
 * Opens a chat file, or says what is wrong with its head: not one, too new, or damaged. A long
 * file is scanned a slice at a time; its messages are read by `messages(k)`. A file the
 * splitter does not take apart is read whole.
 */
export async function openChatFile(data: string | readonly string[]): Promise<ChatFileReader> {
  const whole = (): ChatFileReader => {
    const file = parseWhole(typeof data === 'string' ? data : data.join(''))
    const all = file.sessions.map((s) => s.messages)
    return {
      file: { ...file, sessions: file.sessions.map((s) => ({ ...s, messages: [] })) },
      counts: all.map((m) => m.length),
      messages: async function* (k) {
        yield* all[k]!
      },
    }
  }
  const parts = await splitChatFile(data)
  if (!parts) return whole()
  const raw = parseJson(parts.frame)
  checkHead(raw)
  const sessions = (raw as { sessions?: unknown }).sessions
  // Sessions the splitter did not find (or found more of) are read the way the file says.
  if (!Array.isArray(sessions) || sessions.length !== parts.messages.length) return whole()
  const head = chatFile.safeParse(raw)
  if (!head.success) throw damaged(head.error.issues)
  let read = 0
  return {
    file: head.data,
    counts: parts.messages.map((texts) => texts?.length ?? 0),
    messages: async function* (k) {
      for (const [j, text] of (parts.messages[k] ?? []).entries()) {
        const message = chatFileMessage.safeParse(parseJson(text))
        if (!message.success) throw damaged(message.error.issues, ['sessions', k, 'messages', j])
        yield message.data
        if (++read % MESSAGES_PER_TURN === 0) await breathe()
      }
    },
  }
}

/**
 * Reads a chat file whole, or says what is wrong with it: not one, too new, or damaged, with
 * the event loop free every few hundred messages (parsing and checking 50,000 messages at once
 * held it for 0.2–0.35 s).
 */
export async function readChatFile(data: string | readonly string[]): Promise<ChatFile> {
  const { file, messages } = await openChatFile(data)
  for (const [k, s] of file.sessions.entries()) {
    const out: ChatFileMessage[] = []
    for await (const m of messages(k)) out.push(m)
    s.messages = out
  }
  return file
}
