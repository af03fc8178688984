import type { Model, ModelEvent, ModelMessage, ModelStepRequest } from './types'
import { ModelError, readableOutput } from './types'

/**
 * The scripted offline model: the default, needing no network and no key. It is a script,
 * not a language model, and the UI names it so. Commands in the last user message:
 *   any text              → a short markdown reply quoting the prompt
 *   /stream N [DELAY_MS]  → N words, DELAY_MS (default 20) between deltas
 *   /markdown N [DELAY_MS] → N words as markdown of every kind (markdownReply), paced as /stream
 *   /list N [DELAY_MS]    → a numbered list of N items (listReply), a word a delta, paced as /stream
 *   /error TEXT           → the step fails with TEXT
 *   /tool NAME JSON       → one call of tool NAME with that input, then a reply about its result
 *   /think TEXT           → a reasoning part, then a reply
 */
export const SCRIPTED_MODEL_ID = 'scripted'

export function createScriptedModel(): Model {
  return {
    id: SCRIPTED_MODEL_ID,
    label: 'Scripted model (not an AI)',
    offline: true,
    step: (request) => scriptedStep(request),
    summarize: async (messages) => summarize(messages),
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return signal.aborted ? Promise.reject(abortError()) : Promise.resolve()
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError())
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortError())
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * `n` words, word1 … wordN, as markdown of every kind a reply holds, in turn: a paragraph with
 * bold and code, a list, a table, a code block, a heading; then wordN, a paragraph of its own.
 */
export function markdownReply(n: number): string {
  let i = 1
  const take = (k: number) => {
    const words: string[] = []
    while (words.length < k && i < n) words.push(`word${i++}`)
    return words
  }
  const rows = (words: string[], k: number) =>
    Array.from({ length: Math.ceil(words.length / k) }, (_, r) => words.slice(r * k, r * k + k))
  const blocks: string[] = []
  for (let b = 0; i < n; b++) {
    switch (b % 5) {
      case 0:
        blocks.push(
          take(40)
            .map((w, j) => (j % 7 === 3 ? `**${w}**` : j % 11 === 5 ? `\`${w}\`` : w))
            .join(' '),
        )
        break
      case 1:
        blocks.push(
          rows(take(15), 3)
            .map((r) => `- item ${r.join(' ')}`)
            .join('\n'),
        )
        break
      case 2:
        blocks.push(
          ['| a | b | c |', '| - | - | - |', ...rows(take(12), 3).map((r) => `| ${r.join(' | ')} |`)].join(
            '\n',
          ),
        )
        break
      case 3:
        blocks.push(['```ts', ...rows(take(12), 3).map((r) => `const ${r.join(' = ')}`), '```'].join('\n'))
        break
      default:
        blocks.push(`## ${take(3).join(' ')}`)
    }
  }
  // It ends with a paragraph of its last word, so that word is the last thing streamed.
  if (n > 0) blocks.push(`word${n}`)
  return blocks.join('\n\n')
}

/**
 * A numbered list of `n` items, each with bold and code, every fifth with a nested point (under
 * its item's text, so inside the item), the last word `pointN`: one
 * markdown block as long as it gets (the renderer cuts it between items, lib/split-blocks.ts).
 */
export function listReply(n: number): string {
  const items: string[] = []
  for (let i = 1; i <= n; i++) {
    items.push(`${i}. **Point ${i}**: a step with \`code ${i}\` and a few words about point${i}`)
    if (i % 5 === 0 && i < n) items.push(`${' '.repeat(String(i).length + 2)}- a nested note on point ${i}`)
  }
  return items.join('\n')
}

function abortError(): Error {
  const err = new Error('The model step was aborted.')
  err.name = 'AbortError'
  return err
}

/** Splits text into chunks of a few words, keeping whitespace, so replies stream visibly. */
function chunks(text: string, wordsPerChunk = 3): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? []
  const out: string[] = []
  for (let i = 0; i < words.length; i += wordsPerChunk) out.push(words.slice(i, i + wordsPerChunk).join(''))
  return out
}

const usage = (request: ModelStepRequest, output: string) => ({
  input_tokens: Math.ceil(JSON.stringify(request.messages).length / 4),
  output_tokens: Math.ceil(output.length / 4),
})

async function* streamText(text: string, delay: number, signal: AbortSignal): AsyncGenerator<ModelEvent> {
  for (const chunk of chunks(text)) {
    await sleep(delay, signal)
    yield { type: 'text-delta', text: chunk }
  }
}

/** A prompt's own text, and a line for each file attached after it (see context.ts). */
function splitAttachments(content: string): { prompt: string; files: string[] } {
  const at = content.indexOf('\n\n<attachment name="')
  if (at < 0) return { prompt: content, files: [] }
  const files = [
    ...content.slice(at).matchAll(/<attachment name="([^"]*)" type="[^"]*">\n([\s\S]*?)\n<\/attachment>/g),
  ].map(([, name, text]) => `**${name}** (${text!.split('\n').length} lines)`)
  return { prompt: content.slice(0, at), files }
}

async function* scriptedStep(request: ModelStepRequest): AsyncGenerator<ModelEvent> {
  const { signal, messages } = request
  const last = messages[messages.length - 1]

  // After tool results: report them, as a model would.
  if (last?.role === 'tool') {
    const lines = last.content.map((r) =>
      r.isError
        ? `The tool \`${r.toolName}\` did not run: ${stringify(r.output)}`
        : `The tool \`${r.toolName}\` returned:\n\n\`\`\`json\n${stringify(readableOutput(r.output))}\n\`\`\``,
    )
    const reply = lines.join('\n\n')
    yield* streamText(reply, 15, signal)
    yield { type: 'finish', usage: usage(request, reply) }
    return
  }

  const { prompt, files } = last?.role === 'user' ? splitAttachments(last.content) : { prompt: '', files: [] }
  if (last?.role === 'user')
    for (const i of last.images ?? []) files.push(`the image **${i.name}** (${i.mime_type})`)
  const steering = prompt.startsWith('[Steering note] ')

  const stream = /^\/(stream|markdown|list)\s+(\d+)(?:\s+(\d+))?\s*$/.exec(prompt)
  if (stream) {
    const n = Math.min(Number(stream[2]), 1_000_000)
    const delay = stream[3] === undefined ? 20 : Number(stream[3])
    // The markdown replies: a word a delta, each with the markdown before it.
    const reply = stream[1] === 'markdown' ? markdownReply(n) : stream[1] === 'list' ? listReply(n) : null
    const pieces = reply === null ? null : (reply.match(/\s*\S+/g) ?? [])
    const count = pieces ? pieces.length : n
    let produced = 0
    for (let i = 1; i <= count; i++) {
      if (delay > 0) await sleep(delay, signal)
      else if (signal.aborted) throw abortError()
      else if (i % 512 === 0) await new Promise((r) => setImmediate(r))
      const word = pieces ? pieces[i - 1]! : `word${i}${i === n ? '' : ' '}`
      produced += word.length
      yield { type: 'text-delta', text: word }
    }
    yield { type: 'finish', usage: { input_tokens: 1, output_tokens: Math.ceil(produced / 4) } }
    return
  }

  const error = /^\/error(?:\s+([\s\S]*))?$/.exec(prompt)
  if (error) {
    await sleep(10, signal)
    throw new ModelError(error[1]?.trim() || 'The scripted model was asked to fail.')
  }

  const tool = /^\/tool\s+(\S+)(?:\s+([\s\S]*))?$/.exec(prompt)
  if (tool) {
    const name = tool[1]!
    const input = tool[2]?.trim() || '{}'
    const toolCallId = `call_${Math.random().toString(36).slice(2, 10)}`
    yield { type: 'text-delta', text: `Calling \`${name}\`.` }
    yield { type: 'tool-input-start', toolCallId, toolName: name }
    for (let i = 0; i < input.length; i += 8) {
      await sleep(5, signal)
      yield { type: 'tool-input-delta', toolCallId, text: input.slice(i, i + 8) }
    }
    yield { type: 'tool-call', toolCallId, toolName: name, input }
    yield { type: 'finish', usage: usage(request, input) }
    return
  }

  const think = /^\/think\s+([\s\S]*)$/.exec(prompt)
  if (think) {
    for (const chunk of chunks(`Considering: ${think[1]!.trim()}`)) {
      await sleep(10, signal)
      yield { type: 'reasoning-delta', text: chunk }
    }
    const reply = `I thought about **${think[1]!.trim()}**.`
    yield* streamText(reply, 10, signal)
    yield { type: 'finish', usage: usage(request, reply) }
    return
  }

  const reply = steering
    ? `Understood — I will follow your steering note:\n\n> ${prompt.slice('[Steering note] '.length)}`
    : `You said:\n\n${quote(prompt)}\n\n${files.length ? `You attached ${files.join(', ')}.\n\n` : ''}I am the **scripted offline model**: I answer without a network or a key. ` +
      'Try `/stream 50`, `/tool list_directory {"path":"."}` or `/error something broke`.'
  yield* streamText(reply, 20, signal)
  yield { type: 'finish', usage: usage(request, reply) }
}

function quote(text: string): string {
  return text
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n')
}

function stringify(v: unknown): string {
  if (typeof v === 'string') return v
  try {
    return JSON.stringify(v, null, 2)
  } catch {
    return String(v)
  }
}

function summarize(messages: ModelMessage[]): string {
  let users = 0
  let assistants = 0
  const topics: string[] = []
  for (const m of messages) {
    if (m.role === 'user') {
      users++
      if (topics.length < 5) topics.push(m.content.slice(0, 60).replace(/\s+/g, ' '))
    } else if (m.role === 'assistant') assistants++
  }
  const list = topics.map((t) => `- ${t}`).join('\n')
  return `Summary of ${messages.length} earlier messages (${users} from the user, ${assistants} from the assistant).${list ? `\nTopics:\n${list}` : ''}`
}
