import { join } from 'node:path'
import type { LocalDownload } from '../../../src-shared/types'
import { Downloads } from './downloads'
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
