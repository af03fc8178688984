import type {
  ChatModelFunctions,
  ChatWrapper,
  ChatWrapperGenerateContextStateOptions,
  ChatWrapperGeneratedContextState,
  Llama,
  Token,
} from 'node-llama-cpp'
import type { FunctionSpec, HistoryItem } from './protocol'

type Lib = typeof import('node-llama-cpp')

/**
 * A chat wrapper that engages function calling from the first token: the reply is a tool
 * call, its name and arguments constrained by grammar (tool_choice "required").
 */
export function requiredCall(lib: Lib, inner: ChatWrapper): ChatWrapper {
  class RequiredCall extends lib.ChatWrapper {
    readonly wrapperName = `${inner.wrapperName} (tool call required)`
    override readonly settings = inner.settings
    override generateContextState(
      options: ChatWrapperGenerateContextStateOptions,
    ): ChatWrapperGeneratedContextState {
      const state = inner.generateContextState(options)
      return {
        contextText: state.contextText,
        stopGenerationTriggers: state.stopGenerationTriggers,
        ...(state.ignoreStartText ? { ignoreStartText: state.ignoreStartText } : {}),
        functionCall: { initiallyEngaged: true, disengageInitiallyEngaged: [] },
      }
    }
    override generateAvailableFunctionsSystemText(
      ...args: Parameters<ChatWrapper['generateAvailableFunctionsSystemText']>
    ) {
      return inner.generateAvailableFunctionsSystemText(...args)
    }
  }
  return new RequiredCall()
}

/**
 * Reasoning back in the text as <think>…</think> for a chat template with no thought format of
 * its own: the prompt then matches what the model wrote (and the cached tokens stay valid).
 */
export function inlineThoughts(history: HistoryItem[]): HistoryItem[] {
  return history.map((item) =>
    item.type !== 'model'
      ? item
      : {
          ...item,
          response: item.response.map((r) =>
            typeof r === 'object' && r.type === 'segment' ? `<think>${r.text}</think>` : r,
          ),
        },
  )
}

const checkedSchemas = new Map<string, Record<string, unknown>>()

/**
 * Each tool's schema as one a grammar is built from: a schema llama.cpp's grammar cannot take
 * (checked once, then remembered) is replaced by "an object of plain values", so the tool can
 * still be called and validates its input itself.
 */
export function grammarReady(
  lib: Lib,
  l: Llama,
  functions: Record<string, FunctionSpec>,
): ChatModelFunctions {
  const out: Record<string, FunctionSpec> = {}
  for (const [name, f] of Object.entries(functions)) {
    const key = JSON.stringify(f.params)
    let params = checkedSchemas.get(key)
    if (!params) {
      try {
        new lib.LlamaJsonSchemaGrammar(l, f.params as ConstructorParameters<Lib['LlamaJsonSchemaGrammar']>[1])
        params = f.params
      } catch {
        params = { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } }
      }
      checkedSchemas.set(key, params)
    }
    out[name] = { ...f, params }
  }
  return out as ChatModelFunctions
}

/** How many leading tokens two token lists share (what the sequence kept). */
export function commonPrefix(a: readonly Token[], b: readonly Token[]): number {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a[i] === b[i]) i++
  return i
}
