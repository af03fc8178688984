import { readdirSync, statSync } from 'node:fs'
import { totalmem } from 'node:os'
import { join } from 'node:path'
import type { CatalogueModel, LocalDownload, LibraryModel, MemoryFit } from '../../../src-shared/local-models'
import { CATALOGUE } from './catalogue'
import { Downloads, isGguf } from './downloads'
import { importModel, removeModel } from './import'

/**
 * The files of the local model library in `<dataDir>/models`: imports, downloads and removal.
 * (Which files are models, and running them, is the local engine's.) `onChange` fires after a
 * file arrived or went, so the model list is rebuilt.
 */
export class LocalLibrary {
  readonly dir: string
  readonly downloads: Downloads
  private readonly listeners = new Set<(downloads: LocalDownload[]) => void>()

  constructor(
    dataDir: string,
    private readonly onChange: () => void,
    log: (message: string) => void,
  ) {
    this.dir = join(dataDir, 'models')
    let count = 0
    this.downloads = new Downloads(
      this.dir,
      (list) => {
        for (const l of this.listeners) l(list)
        // A download that finished left the list: its file is in the folder now.
        if (list.length < count) this.onChange()
        count = list.length
      },
      log,
    )
    count = this.downloads.list().length
  }

  /** The .gguf files in the folder, each with how much memory it needs and whether that fits here. */
  list(): {
    models: LibraryModel[]
    catalogue: Array<CatalogueModel & { fit: MemoryFit }>
    memory: number
    dir: string
  } {
    const memory = totalmem()
    let files: string[] = []
    try {
      files = readdirSync(this.dir).filter((f) => f.toLowerCase().endsWith('.gguf'))
    } catch {
      // No folder yet: no models.
    }
    // The engine's reading of every file's header, taken once for the whole list.
    const headers = new Map((this.headers?.() ?? []).map((h) => [h.path, h]))
    const models = files.sort().flatMap((file): LibraryModel[] => {
      const path = join(this.dir, file)
      let size: number
      try {
        const st = statSync(path)
        if (!st.isFile()) return []
        size = st.size
      } catch {
        return []
      }
      const header = headers.get(path)
      const needs = memoryFor(size)
      return [
        {
          id: `local/${file}`,
          file,
          name: header?.name ?? file.replace(/\.gguf$/i, ''),
          size,
          quantisation:
            header?.quantisation ??
            /(?:^|[-_.])((?:I?Q\d(?:_[A-Z0-9]+)*)|F16|BF16|F32)(?:[-_.]|$)/i.exec(file)?.[1]?.toUpperCase() ??
            null,
          context_length: header?.context_length ?? null,
          memory: needs,
          fit: fitOf(needs, memory),
          problem: isGguf(path)
            ? (header?.problem ?? null)
            : 'This file is not a GGUF model (it does not start with "GGUF").',
        },
      ]
    })
    return {
      models,
      catalogue: CATALOGUE.map((c) => ({ ...c, fit: fitOf(c.memory, memory) })),
      memory,
      dir: this.dir,
    }
  }

  /** What the local engine reads from each file's header (its name, quantisation, context). */
  headers:
    | (() => Array<{
        path: string
        name?: string | null
        quantisation?: string | null
        context_length?: number | null
        problem?: string | null
      }>)
    | null = null

  import(path: string): { name: string; size: number } {
    const done = importModel(this.dir, path)
    this.onChange()
    return done
  }

  remove(file: string): { removed: true } {
    removeModel(this.dir, file)
    this.onChange()
    return { removed: true }
  }

  onDownloads(listener: (downloads: LocalDownload[]) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  close(): void {
    this.downloads.close()
  }
}

/** About what a model needs to run: its weights, plus a 4k-token context and the runtime's own. */
export function memoryFor(fileSize: number): number {
  return Math.round(fileSize * 1.15 + 300 * 1024 * 1024)
}

/** Fits when it takes at most half of the memory (the OS and the app need the rest); tight up to 80 %. */
export function fitOf(needs: number, total: number): MemoryFit {
  return needs <= total * 0.5 ? 'fits' : needs <= total * 0.8 ? 'tight' : 'too_big'
}
