/** The local models folder as clients see it: its files, the catalogue, downloads (Settings → Local models). */

/** A model file being downloaded into the local models folder (Settings → Local models). */
export interface LocalDownload {
  download_id: string
  url: string
  /** The file name it gets in the models folder. */
  name: string
  status: 'downloading' | 'paused' | 'verifying' | 'failed'
  received: number
  /** Bytes in all, once the server said (null until then, or when it does not). */
  total: number | null
  bytes_per_second: number
  seconds_left: number | null
  /** The checksum it is checked against: given, or Hugging Face's X-Linked-Etag. */
  sha256?: string
  /** Why it stopped (a cut connection, a full disk, a wrong checksum…) and what Resume does. */
  error?: string
}

/** Whether a model fits in this computer's memory: easily, only just, or not. */
export type MemoryFit = 'fits' | 'tight' | 'too_big'

/** A model file in the local models folder. */
export interface LibraryModel {
  /** The model id for set({ model }): "local/<file>". */
  id: string
  file: string
  name: string
  size: number
  quantisation: string | null
  context_length: number | null
  /** About how much memory it needs to run (the file, plus its context). */
  memory: number
  fit: MemoryFit
  /** Why the file cannot be read as a model, if it cannot. */
  problem: string | null
}

/** A model Arbor offers to download (Settings → Local models). */
export interface CatalogueModel {
  name: string
  publisher: string
  url: string
  size: number
  memory: number
  quantisation: string
  context_length: number
  note: string
}
