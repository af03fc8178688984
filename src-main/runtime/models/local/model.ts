import type { Model, ModelEvent, ModelMessage, ModelStepRequest } from '../types'
import { ModelError } from '../types'
import type { LocalEngine } from './engine'
import { toFunctions, toHistory } from './history'
import type { StepOptions } from './protocol'
import { ThinkSplitter } from './think'

export interface LocalModelFile {
  id: string
  label: () => string
  path: string
  context_window: number
  /** Why this file cannot chat (an embedding model): every step says so. */
  refuse?: string
}

/** A GGUF file as an Arbor model: each step runs in the local-model worker (see engine.ts). */
export function createLocalModel(engine: LocalEngine, file: LocalModelFile, options: StepOptions): Model {
  async function* step(request: ModelStepRequest): AsyncGenerator<ModelEvent> {
    if (file.refuse) throw new ModelError(file.refuse)
    const think = new ThinkSplitter()
    const ids = new Map<number, string>()
    const callId = (index: number) => {
      let id = ids.get(index)
      if (!id) ids.set(index, (id = `local_${Math.random().toString(36).slice(2, 10)}_${index}`))
      return id
    }
    const text = (parts: ReturnType<ThinkSplitter['push']>): ModelEvent[] =>
      parts.map((p) => ({ type: p.kind === 'text' ? 'text-delta' : 'reasoning-delta', text: p.text }))
    for await (const out of engine.step(
      {
        model_path: file.path,
        context_size: file.context_window,
        session: request.session_id ?? null,
        history: toHistory(request.system, request.messages),
        functions: toFunctions(request.tools),
        options,
      },
      request.signal,
    )) {
      if (out.type === 'events') {
        for (const e of out.events) {
          if (e.kind === 'text') yield* text(think.push(e.text))
          else if (e.kind === 'reasoning') yield { type: 'reasoning-delta', text: e.text }
          else if (e.kind === 'call-start') {
            yield* text(think.end())
            yield { type: 'tool-input-start', toolCallId: callId(e.index), toolName: e.name }
          } else yield { type: 'tool-input-delta', toolCallId: callId(e.index), text: e.text }
        }
        continue
      }
      yield* text(think.end())
      for (const c of out.calls) {
        if (!ids.has(c.index))
          yield { type: 'tool-input-start', toolCallId: callId(c.index), toolName: c.name }
        yield {
          type: 'tool-call',
          toolCallId: callId(c.index),
          toolName: c.name,
          input: JSON.stringify(c.params ?? {}),
        }
      }
      yield {
        type: 'finish',
        usage: out.usage,
        reason: out.calls.length ? 'tool-calls' : out.reason,
      }
    }
  }

  return {
    id: file.id,
    get label() {
      return file.label()
    },
    offline: true,
    context_window: file.context_window,
    step,
    async summarize(messages: ModelMessage[], signal: AbortSignal): Promise<string> {
      let summary = ''
      for await (const ev of step({
        system:
          'You summarise conversations. Write a short summary of the conversation below: what was asked, what was done and decided, and what is still open.',
        messages: [{ role: 'user', content: transcript(messages) }],
        tools: [],
        signal,
      }))
        if (ev.type === 'text-delta') summary += ev.text
      return summary.trim()
    },
  }
}

function transcript(messages: ModelMessage[]): string {
  return messages
    .map((m) => {
      if (m.role === 'system' || m.role === 'user') return `${m.role}: ${m.content}`
      if (m.role === 'tool')
        return m.content.map((r) => `tool ${r.toolName}: ${JSON.stringify(r.output)}`).join('\n')
      return `assistant: ${m.content
        .map((p) => (p.type === 'tool-call' ? `[called ${p.toolName}]` : p.type === 'text' ? p.text : ''))
        .join('')}`
    })
    .join('\n\n')
}
