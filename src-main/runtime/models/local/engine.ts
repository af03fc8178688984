import { existsSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { ModelError } from '../types'
import { localModelError } from './errors'
import type { FromWorker, GpuType, ToWorker, WorkerConfig } from './protocol'

export interface LocalEngineOptions extends WorkerConfig {
  /** The built worker script (out/main/local-model-worker.js); null when it was not built. */
  worker: string | null
  /** llama.cpp and its models are freed after this long without a step. */
  idle_unload_ms: number
  log: (message: string) => void
}

export interface LocalEngineInfo {
  /** unloaded: no thread, nothing in memory; running: the worker is up (models load on use). */
  state: 'unloaded' | 'running'
  /** The backend llama.cpp runs on ('metal' | 'cuda' | 'vulkan', false: CPU); null until first started. */
  gpu: GpuType | null
  /** The model files in memory now. */
  loaded: string[]
  /** How many times the worker was started and ended (each end frees every model). */
  starts: number
  unloads: number
  /** Prompt tokens of the last step that the session's sequence already held (prompt caching). */
  last_cached_tokens: number
}

type StepMessage = Extract<ToWorker, { type: 'step' }>
export type StepOutput = Extract<FromWorker, { type: 'events' } | { type: 'done' }>

/** A queue that a worker's messages go into and one step's generator takes out of. */
class Inbox {
  private items: FromWorker[] = []
  private failure: Error | null = null
  private wake: (() => void) | null = null
  put(msg: FromWorker) {
    this.items.push(msg)
    this.wake?.()
  }
  fail(err: Error) {
    this.failure ??= err
    this.wake?.()
  }
  async next(): Promise<FromWorker> {
    for (;;) {
      if (this.failure) throw this.failure
      const item = this.items.shift()
      if (item) return item
      await new Promise<void>((resolve) => (this.wake = resolve))
      this.wake = null
    }
  }
}

function abortError(): Error {
  const err = new Error('The model step was aborted.')
  err.name = 'AbortError'
  return err
}

/**
 * The main thread's side of the local-model worker: starts it on the first step, routes each
 * step's stream back to its caller, cancels on the step's AbortSignal at once (the caller
 * stops waiting; the worker stops generating at its next token), and ends the worker after
 * `idle_unload_ms` without a step, which frees llama.cpp and every model.
 */
export class LocalEngine {
  private worker: Worker | null = null
  private nextId = 1
  /** Each step in progress, with the worker running it. */
  private readonly inboxes = new Map<number, { inbox: Inbox; worker: Worker }>()
  /** Workers asked to free everything and end: new steps start a fresh one meanwhile. */
  private readonly retiring = new Set<Worker>()
  private active = 0
  private idleTimer: NodeJS.Timeout | null = null
  private readonly listeners = new Set<(info: LocalEngineInfo) => void>()
  private readonly exited = new Set<Promise<void>>()
  private closed = false
  private state: LocalEngineInfo = {
    state: 'unloaded',
    gpu: null,
    loaded: [],
    starts: 0,
    unloads: 0,
    last_cached_tokens: 0,
  }

  constructor(private readonly options: LocalEngineOptions) {}

  info(): LocalEngineInfo {
    return { ...this.state, loaded: [...this.state.loaded] }
  }

  onChange(listener: (info: LocalEngineInfo) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private changed(patch: Partial<LocalEngineInfo>) {
    Object.assign(this.state, patch)
    const info = this.info()
    for (const l of [...this.listeners]) l(info)
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const script = this.options.worker
    if (!script || !existsSync(script))
      throw new ModelError(
        `Arbor's local-model engine is not built (${script ?? 'out/main/local-model-worker.js'} is missing). Run \`npm run build\`, then send the message again.`,
      )
    const config: WorkerConfig = {
      gpu: this.options.gpu,
      threads: this.options.threads,
      max_sessions: this.options.max_sessions,
    }
    const w = new Worker(script, { workerData: config })
    // A process with nothing else to do may end while the worker idles (not while it generates: see step).
    w.unref()
    this.worker = w
    this.changed({ state: 'running', starts: this.state.starts + 1, loaded: [] })
    w.on('message', (msg: FromWorker) => this.receive(w, msg))
    w.on('error', (err) => this.lost(w, `it failed: ${err.message}`))
    const exit = new Promise<void>((resolve) =>
      w.once('exit', (code) => {
        this.lost(w, `it exited with code ${code}`)
        resolve()
      }),
    )
    this.exited.add(exit)
    void exit.then(() => this.exited.delete(exit))
    return w
  }

  private receive(w: Worker, msg: FromWorker) {
    if (msg.type === 'events' || msg.type === 'done' || msg.type === 'error') {
      if (msg.type === 'done') this.changed({ last_cached_tokens: msg.cached_tokens })
      const entry = this.inboxes.get(msg.id)
      if (entry?.worker === w) entry.inbox.put(msg)
      return
    }
    // What a retiring worker still says no longer describes the engine.
    if (w !== this.worker) return
    if (msg.type === 'ready') return this.changed({ gpu: msg.gpu })
    if (msg.type === 'loaded') {
      this.options.log(`loaded ${msg.model_path} in ${msg.ms} ms`)
      return this.changed({ loaded: [...this.state.loaded, msg.model_path] })
    }
    if (msg.type === 'freed')
      return this.changed({ loaded: this.state.loaded.filter((p) => p !== msg.model_path) })
  }

  /** The worker ended: every step still waiting on it fails with a sentence that says what to do. */
  private lost(w: Worker, why: string) {
    const retired = this.retiring.delete(w)
    if (!retired && this.worker !== w) return
    if (this.worker === w) this.worker = null
    const failure = retired
      ? 'The local model was unloaded while it was answering. Send the message again to load it again.'
      : `The local model engine stopped unexpectedly (${why}). Send the message again to start it again.`
    for (const e of this.inboxes.values()) if (e.worker === w) e.inbox.fail(new ModelError(failure))
    if (!retired) this.options.log(`the local-model worker stopped (${why})`)
    this.changed({
      state: this.worker ? 'running' : 'unloaded',
      loaded: this.worker ? this.state.loaded : [],
      unloads: this.state.unloads + 1,
    })
  }

  async *step(req: Omit<StepMessage, 'type' | 'id'>, signal: AbortSignal): AsyncGenerator<StepOutput> {
    if (signal.aborted) throw abortError()
    if (this.closed) throw new ModelError('Arbor is closing; send the message again after it starts.')
    const w = this.start()
    const id = this.nextId++
    const inbox = new Inbox()
    this.inboxes.set(id, { inbox, worker: w })
    this.active++
    w.ref()
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = null
    const onAbort = () => {
      w.postMessage({ type: 'abort', id } satisfies ToWorker)
      inbox.fail(abortError())
    }
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      w.postMessage({ type: 'step', id, ...req } satisfies ToWorker)
      for (;;) {
        const msg = await inbox.next()
        if (msg.type === 'events') yield msg
        else if (msg.type === 'done') {
          yield msg
          return
        } else if (msg.type === 'error')
          throw localModelError(msg.kind, msg.detail, req.model_path, msg.context_size)
      }
    } finally {
      signal.removeEventListener('abort', onAbort)
      // A step given up early (stop, or the caller broke off) stops generating too.
      if (!signal.aborted) w.postMessage({ type: 'abort', id } satisfies ToWorker)
      this.inboxes.delete(id)
      this.active--
      if (this.active === 0) {
        w.unref()
        if (!this.closed) this.armIdle()
      }
    }
  }

  private armIdle() {
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null
      if (this.active === 0) this.unload()
    }, this.options.idle_unload_ms)
    this.idleTimer.unref()
  }

  /**
   * Frees llama.cpp and every model now (the next step starts it again); a reply in progress
   * ends with an error. The worker frees everything itself and ends: it is never terminated
   * from outside, because ending a thread while llama.cpp runs native code aborts the process.
   */
  unload(): void {
    const w = this.worker
    if (!w) return
    this.worker = null
    this.retiring.add(w)
    w.postMessage({ type: 'unload' } satisfies ToWorker)
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.idleTimer) clearTimeout(this.idleTimer)
    // Kept alive until it has freed everything (an unref'd worker would be cut off at exit),
    // for at most a few seconds: a worker stuck in native code then goes with the process.
    this.unload()
    const stuck = [...this.retiring]
    for (const w of stuck) w.ref()
    let waited: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.all([...this.exited]),
      new Promise<void>((resolve) => {
        waited = setTimeout(() => {
          this.options.log('the local-model worker did not end within 5 s of closing')
          for (const w of stuck) w.unref()
          resolve()
        }, 5000)
      }),
    ])
    clearTimeout(waited)
  }
}
