import { mkdirSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs'
import { basename, join } from 'node:path'
import type { LocalModelsInfo } from '../../../../src-shared/contract'
import type { Model } from '../types'
import { LocalEngine, type LocalEngineInfo } from './engine'
import { totalmem } from 'node:os'
import { memoryEstimate, quantName, readGgufHeader, type GgufHeader } from './gguf'
import { createLocalModel } from './model'
import type { GpuType, StepOptions } from './protocol'

export type { LocalEngineInfo } from './engine'

export const LOCAL_MODEL_PREFIX = 'local/'

export interface LocalModelsOptions {
  /** Where the GGUF files are. Default: `<dataDir>/models`. */
  dir?: string
  /** The built worker script. Default: out/main/local-model-worker.js beside the bundle. */
  worker?: string | null
  /** Default 'auto' (the best backend the prebuilt binaries support here); false: CPU only. */
  gpu?: 'auto' | GpuType
  /** CPU threads per context. Default 0: llama.cpp's math cores, leaving one core to the UI. */
  threads?: number
  /** Sessions whose context stays in memory for their next turn. Default 2. */
  max_sessions?: number
  /** Models are freed after this long without a step. Default 5 minutes. */
  idle_unload_ms?: number
  /** The most context a model is given (its GGUF may allow far more than memory does). Default 8192. */
  context_cap?: number
  /** Sampling and the output limit per step. */
  sampling?: Partial<StepOptions>
}

const DEFAULT_SAMPLING: StepOptions = {
  max_tokens: 4096,
  temperature: 0.7,
  top_k: 40,
  top_p: 0.95,
  min_p: 0.05,
  tool_choice: 'auto',
}

/** What Arbor knows of one GGUF file in the models folder. */
export interface LocalModelEntry {
  id: string
  file: string
  path: string
  size: number
  name: string
  quantisation: string | null
  context_length: number | null
  /** Why the header could not be read (the file is listed, and selecting it says so). */
  problem: string | null
  /** The architecture of an embedding model (it cannot chat), else null. */
  embedding: string | null
  header: GgufHeader | null
}

const SPLIT = /-(\d{5})-of-(\d{5})\.gguf$/i
/** Architectures of embedding models: listed (so a file is not silently ignored), said to be unusable for chat. */
const EMBEDDING_ONLY = new Set([
  'bert',
  'nomic-bert',
  'jina-bert-v2',
  'jina-bert-v3',
  't5encoder',
  'modern-bert',
])

const GPU_NAMES: Record<string, string> = { metal: 'Metal', cuda: 'CUDA', vulkan: 'Vulkan' }

/**
 * The local models: every .gguf file in the models folder is a model `local/<file name>`,
 * run by one LocalEngine (a worker thread owning llama.cpp, started on first use).
 */
export class LocalModels {
  readonly dir: string
  readonly engine: LocalEngine
  private readonly headers = new Map<
    string,
    { key: string; header: GgufHeader | null; problem: string | null }
  >()
  private watcher: FSWatcher | null = null
  private settle: NodeJS.Timeout | null = null
  private readonly sampling: StepOptions
  private readonly contextCap: number

  constructor(
    dataDir: string,
    options: LocalModelsOptions,
    private readonly log: (message: string) => void,
  ) {
    this.dir = options.dir ?? join(dataDir, 'models')
    this.sampling = { ...DEFAULT_SAMPLING, ...options.sampling }
    this.contextCap = options.context_cap ?? 8192
    this.engine = new LocalEngine({
      worker: options.worker ?? null,
      gpu: options.gpu ?? 'auto',
      threads: options.threads ?? 0,
      max_sessions: options.max_sessions ?? 2,
      idle_unload_ms: options.idle_unload_ms ?? 5 * 60_000,
      log,
    })
  }

  /** The GGUF files there now, each read from its header (cached while the file is unchanged). */
  entries(): LocalModelEntry[] {
    let files: string[]
    try {
      files = readdirSync(this.dir).filter((f) => f.toLowerCase().endsWith('.gguf'))
    } catch {
      return []
    }
    const out: LocalModelEntry[] = []
    for (const file of files.sort()) {
      // A model split in parts (name-00001-of-00003.gguf) is one model: its first part, which
      // node-llama-cpp loads with the others beside it.
      const part = SPLIT.exec(file)
      if (part && Number(part[1]) !== 1) continue
      const parts = part
        ? Array.from({ length: Number(part[2]) }, (_, i) =>
            file.replace(SPLIT, `-${String(i + 1).padStart(5, '0')}-of-${part[2]}.gguf`),
          )
        : [file]
      const path = join(this.dir, file)
      let size = 0
      let key = ''
      try {
        const st = statSync(path)
        if (!st.isFile()) continue
        for (const p of parts) {
          const ps = p === file ? st : statSync(join(this.dir, p))
          size += ps.size
          key += `${ps.size}:${ps.mtimeMs};`
        }
      } catch {
        // A part still missing (a download in progress): not a model yet.
        continue
      }
      let cached = this.headers.get(path)
      if (cached?.key !== key) {
        try {
          cached = { key, header: readGgufHeader(path), problem: null }
        } catch (err) {
          cached = { key, header: null, problem: err instanceof Error ? err.message : String(err) }
        }
        this.headers.set(path, cached)
      }
      const h = cached.header
      // A vision projector (mmproj-*.gguf) goes with a model; it is not one.
      if (h?.architecture === 'clip') continue
      out.push({
        id: `${LOCAL_MODEL_PREFIX}${file}`,
        file,
        path,
        size,
        name: h?.name ?? basename(file, '.gguf'),
        quantisation: quantName(h?.file_type ?? null),
        context_length: h?.context_length ?? null,
        problem:
          cached.problem ??
          (h && EMBEDDING_ONLY.has(h.architecture)
            ? `it is an embedding model (${h.architecture}), which cannot chat`
            : null),
        embedding: h && EMBEDDING_ONLY.has(h.architecture) ? h.architecture : null,
        header: h,
      })
    }
    return out
  }

  models(): Model[] {
    const entries = this.entries()
    // Two files of the same model and quantisation are told apart by their file names.
    const seen = new Map<string, number>()
    for (const e of entries) seen.set(this.title(e), (seen.get(this.title(e)) ?? 0) + 1)
    return entries.map((e) =>
      createLocalModel(
        this.engine,
        {
          id: e.id,
          path: e.path,
          context_window: this.contextWindow(e),
          label: () => this.label(e, (seen.get(this.title(e)) ?? 0) > 1),
          ...(e.embedding
            ? {
                refuse: `${e.file} is an embedding model (${e.embedding}): it turns text into vectors and cannot chat. Pick a chat (instruct) model for this chat.`,
              }
            : {}),
        },
        this.sampling,
      ),
    )
  }

  private title(e: LocalModelEntry): string {
    return e.problem ? e.file : `${e.name}${e.quantisation ? ` ${e.quantisation}` : ''}`
  }

  private label(e: LocalModelEntry, ambiguous: boolean): string {
    const gpu = this.engine.info().gpu
    const where = gpu === null ? 'local' : gpu ? `local, ${GPU_NAMES[gpu] ?? gpu}` : 'local, CPU'
    if (e.problem) return `${e.file} (${where}, unreadable)`
    return `${this.title(e)}${ambiguous ? ` · ${e.file}` : ''} (${where})`
  }

  info(): LocalEngineInfo & { dir: string } {
    return { ...this.engine.info(), dir: this.dir }
  }

  /** What Settings → Local models shows (the `local.info` call). */
  describe(): LocalModelsInfo {
    const info = this.engine.info()
    return {
      dir: this.dir,
      gpu: info.gpu,
      state: info.state,
      memory_bytes: totalmem(),
      models: this.entries().map(({ path, embedding: _embedding, header, ...e }) => {
        const memory = memoryEstimate(header, e.size, this.contextWindow(e))
        return {
          ...e,
          context_window: this.contextWindow(e),
          loaded: info.loaded.includes(path),
          memory_estimate_bytes: memory,
          // Most of the memory, not all: the system and Arbor need their share.
          fits_in_memory: memory <= totalmem() * 0.8,
        }
      }),
    }
  }

  private contextWindow(e: Pick<LocalModelEntry, 'context_length'>): number {
    return Math.min(e.context_length ?? 4096, this.contextCap)
  }

  /**
   * Calls `changed` when files come and go in the models folder (debounced), and once the GPU
   * llama.cpp runs on is known (the labels name it).
   */
  watch(changed: () => void): void {
    if (this.watcher) return
    let gpuKnown = false
    this.engine.onChange((info) => {
      if (gpuKnown || info.gpu === null) return
      gpuKnown = true
      changed()
    })
    try {
      mkdirSync(this.dir, { recursive: true })
      this.watcher = watch(this.dir, () => {
        if (this.settle) clearTimeout(this.settle)
        // Many events for one copy or download: the list is read once they settle.
        this.settle = setTimeout(() => {
          this.settle = null
          if (this.watcher) changed()
        }, 200)
        this.settle.unref()
      })
      this.watcher.unref()
      this.watcher.on('error', (err) => this.log(`watching ${this.dir} stopped: ${err.message}`))
    } catch (err) {
      this.log(`cannot watch ${this.dir} for models: ${String(err)}`)
    }
  }

  async close(): Promise<void> {
    this.watcher?.close()
    this.watcher = null
    // A change seen just before closing is not reported to a runtime that is gone.
    if (this.settle) clearTimeout(this.settle)
    this.settle = null
    await this.engine.close()
  }
}
