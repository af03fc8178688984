/**
 * The local-model worker (built to out/main/local-model-worker.js): it owns llama.cpp through
 * node-llama-cpp, so loading a model and evaluating a long prompt never run on the event loop
 * of the runtime (and the browser host). Started on the first step of a local model and ended
 * (everything freed) after an idle period; see engine.ts for the other side.
 */
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type {
  ChatHistoryItem,
  ChatWrapper,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaModel,
} from 'node-llama-cpp'
import { readGgufHeader } from './gguf'
import { commonPrefix, grammarReady, inlineThoughts, requiredCall } from './worker-chat'
import { classifyLoad, classifyRun, Failure, message } from './worker-failures'
import type { FromWorker, StepEvent, ToWorker, WorkerConfig } from './protocol'

type Lib = typeof import('node-llama-cpp')
type StepRequest = Extract<ToWorker, { type: 'step' }>

const config = workerData as WorkerConfig
const port = parentPort!
const send = (msg: FromWorker) => port.postMessage(msg)

// llama.cpp's own log lines: kept (the last error says why a load failed), never printed.
const recentErrors: string[] = []

let lib: Promise<Lib> | null = null
let loadedLib: Lib | null = null
let llama: Promise<Llama> | null = null
const models = new Map<string, Promise<{ model: LlamaModel; wrapper: ChatWrapper }>>()

interface Slot {
  key: string
  model_path: string
  context: LlamaContext
  sequence: LlamaContextSequence
  busy: boolean
  used: number
}
const slots = new Map<string, Slot>()
const controllers = new Map<number, AbortController>()
/** The model file of each step in progress (loading included). */
const running = new Map<number, string>()

function getLib(): Promise<Lib> {
  // A real dynamic import: node-llama-cpp is ESM-only and stays outside the bundle.
  return (lib ??= import('node-llama-cpp').then((l) => (loadedLib = l)))
}

function getLlamaOnce(): Promise<Llama> {
  llama ??= (async () => {
    const { getLlama, LlamaLogLevel } = await getLib()
    try {
      const l = await getLlama({
        gpu: config.gpu,
        // Never build from source or download at run time: the prebuilt binaries or nothing.
        build: 'never',
        logLevel: LlamaLogLevel.warn,
        logger: (level, message) => {
          if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal) {
            recentErrors.push(message.trim())
            if (recentErrors.length > 5) recentErrors.shift()
          }
        },
      })
      send({ type: 'ready', gpu: l.gpu })
      return l
    } catch (err) {
      llama = null
      throw new Failure('binary', message(err))
    }
  })()
  return llama
}

/**
 * Before another model loads, the models no chat is answering with are freed (with their
 * contexts): a model takes gigabytes, and switching models should not add them up.
 */
async function freeOtherModels(path: string): Promise<void> {
  for (const [other, entry] of [...models]) {
    if (other === path) continue
    const used = [...slots.values()].filter((s) => s.model_path === other)
    if (used.some((s) => s.busy) || [...running.values()].includes(other)) continue
    models.delete(other)
    for (const s of used) {
      slots.delete(s.key)
      await s.context.dispose().catch(() => {})
    }
    await entry.then((e) => e.model.dispose()).catch(() => {})
    send({ type: 'freed', model_path: other })
  }
}

async function modelFor(path: string) {
  let entry = models.get(path)
  if (!entry) {
    await freeOtherModels(path)
    entry = (async () => {
      const l = await getLlamaOnce()
      const { resolveChatWrapper } = await getLib()
      const started = Date.now()
      recentErrors.length = 0
      let model: LlamaModel
      try {
        // Arbor's own header check first: it says plainly what is wrong with a file that is no GGUF.
        readGgufHeader(path)
      } catch (err) {
        throw new Failure('corrupt', message(err))
      }
      try {
        model = await l.loadModel({ modelPath: path })
      } catch (err) {
        // llama.cpp's log lines reach this thread just after the failure they explain.
        await new Promise((r) => setTimeout(r, 50))
        throw classifyLoad(loadedLib, err, recentErrors)
      }
      // The chat template comes from the GGUF (tokenizer.chat_template), matched to one of
      // node-llama-cpp's wrappers where it is a known format, else run as a Jinja template.
      const wrapper = resolveChatWrapper(model)
      send({ type: 'loaded', model_path: path, ms: Date.now() - started })
      return { model, wrapper }
    })()
    models.set(path, entry)
    entry.catch(() => models.delete(path))
  }
  return entry
}

/** Frees the least recently used idle contexts until at most `max` are kept. */
async function trim(max: number): Promise<void> {
  for (const s of [...slots.values()].sort((a, b) => a.used - b.used)) {
    if (slots.size <= max) break
    if (s.busy) continue
    slots.delete(s.key)
    await s.context.dispose().catch(() => {})
  }
}

/** The session's sequence (a context of its own), kept for its next turn; the least recently used go. */
async function slotFor(req: StepRequest, model: LlamaModel): Promise<Slot> {
  const key = req.session === null ? null : `${req.session}\u0000${req.model_path}`
  const existing = key === null ? undefined : slots.get(key)
  if (existing) return existing
  await trim(config.max_sessions - 1)
  // llama.cpp's math cores (the performance cores), leaving one core of the machine to the UI.
  const threads =
    config.threads || Math.max(1, Math.min(model.llama.cpuMathCores, availableParallelism() - 1))
  let context: LlamaContext
  try {
    // As much of the asked context as fits in memory, and at least a little.
    context = await model.createContext({
      contextSize: { min: Math.min(512, req.context_size), max: req.context_size },
      sequences: 1,
      threads,
    })
  } catch (err) {
    throw classifyRun(loadedLib, err, req.context_size)
  }
  const slot: Slot = {
    model_path: req.model_path,
    key: key ?? '',
    context,
    sequence: context.getSequence(),
    busy: false,
    used: Date.now(),
  }
  if (key !== null) slots.set(key, slot)
  return slot
}

async function step(req: StepRequest): Promise<void> {
  const ctl = new AbortController()
  controllers.set(req.id, ctl)
  running.set(req.id, req.model_path)
  let slot: Slot | null = null
  let flushing: StepEvent[] = []
  const flush = () => {
    if (flushing.length === 0) return
    send({ type: 'events', id: req.id, events: flushing })
    flushing = []
  }
  // Deltas go out in small batches (one message per event-loop turn of this thread).
  const emit = (e: StepEvent) => {
    if (flushing.length === 0) setImmediate(flush)
    flushing.push(e)
  }
  try {
    if (!existsSync(req.model_path)) throw new Failure('missing', `${req.model_path} does not exist`)
    const l = await getLib()
    const { model, wrapper } = await modelFor(req.model_path)
    if (ctl.signal.aborted) return
    slot = await slotFor(req, model)
    slot.busy = true
    slot.used = Date.now()
    const before = [...slot.sequence.contextTokens]
    const meter = slot.sequence.tokenMeter
    const out0 = meter.usedOutputTokens
    const functions = req.functions ? grammarReady(l, await getLlamaOnce(), req.functions) : null
    const last = req.history[req.history.length - 1]
    const required =
      functions !== null &&
      req.options.tool_choice === 'required' &&
      last?.type === 'model' &&
      last.response.length === 0
    const chat = new l.LlamaChat({
      contextSequence: slot.sequence,
      chatWrapper: required ? requiredCall(l, wrapper) : wrapper,
    })
    const started = new Set<number>()
    const sampling = {
      maxTokens: req.options.max_tokens,
      temperature: req.options.temperature,
      topK: req.options.top_k,
      topP: req.options.top_p,
      minP: req.options.min_p,
      signal: ctl.signal,
      stopOnAbortSignal: true,
      onResponseChunk: (chunk: { type?: 'segment'; segmentType?: string; text: string }) => {
        if (!chunk.text) return
        emit({
          kind: chunk.type === 'segment' && chunk.segmentType === 'thought' ? 'reasoning' : 'text',
          text: chunk.text,
        })
      },
    }
    // The whole history each time: the sequence keeps the tokens it already holds up to the
    // first one that differs (prompt caching) and evaluates only the rest.
    const history = (
      wrapper.settings.segments?.thought ? req.history : inlineThoughts(req.history)
    ) as ChatHistoryItem[]
    const res = functions
      ? await chat.generateResponse(history, {
          ...sampling,
          functions,
          ...(required ? { maxParallelFunctionCalls: 1 } : {}),
          onFunctionCallParamsChunk: (c) => {
            if (!started.has(c.callIndex)) {
              started.add(c.callIndex)
              emit({ kind: 'call-start', index: c.callIndex, name: c.functionName })
            }
            if (c.paramsChunk) emit({ kind: 'call-delta', index: c.callIndex, text: c.paramsChunk })
          },
        })
      : await chat.generateResponse(history, sampling)
    chat.dispose()
    flush()
    if (unloading) throw new Failure('other', 'it was unloaded while it was answering')
    const output = meter.usedOutputTokens - out0
    const total = slot.sequence.contextTokens.length
    const stop = res.metadata.stopReason
    send({
      type: 'done',
      id: req.id,
      calls: (res.functionCalls ?? []).map((c, index) => ({ index, name: c.functionName, params: c.params })),
      reason:
        stop === 'functionCalls'
          ? 'tool-calls'
          : stop === 'maxTokens'
            ? 'length'
            : stop === 'abort'
              ? 'other'
              : 'stop',
      usage: { input_tokens: Math.max(0, total - output), output_tokens: output },
      cached_tokens: commonPrefix(before, slot.sequence.contextTokens),
    })
  } catch (err) {
    flush()
    const f = classifyRun(loadedLib, err, slot?.context.contextSize ?? req.context_size)
    send({
      type: 'error',
      id: req.id,
      kind: f.kind,
      detail: f.message,
      ...(f.context_size ? { context_size: f.context_size } : {}),
    })
  } finally {
    controllers.delete(req.id)
    running.delete(req.id)
    if (slot) {
      slot.busy = false
      // A one-off context is not kept; contexts made while all were busy go once they are not.
      if (req.session === null) await slot.context.dispose().catch(() => {})
      else await trim(config.max_sessions)
    }
  }
}

let unloading = false

async function unload(): Promise<void> {
  unloading = true
  for (const c of controllers.values()) c.abort()
  for (const s of slots.values()) await s.context.dispose().catch(() => {})
  slots.clear()
  for (const m of models.values()) await m.then((e) => e.model.dispose()).catch(() => {})
  models.clear()
  if (llama) await llama.then((l) => l.dispose()).catch(() => {})
  send({ type: 'unloaded' })
  port.close()
}

port.on('message', (msg: ToWorker) => {
  if (msg.type === 'step') void step(msg)
  else if (msg.type === 'abort') controllers.get(msg.id)?.abort()
  else if (msg.type === 'unload') void unload()
})
