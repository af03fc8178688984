import { closeSync, openSync, readSync } from 'node:fs'

/** What Arbor reads from a GGUF file's header to list it (no weights are read). */
export interface GgufHeader {
  architecture: string
  name: string | null
  context_length: number | null
  /** general.file_type: the quantisation (see QUANT_NAMES). */
  file_type: number | null
  has_chat_template: boolean
  /** What the KV cache's size follows from (null where the header does not say). */
  layers: number | null
  embedding_length: number | null
  heads: number | null
  kv_heads: number | null
}

/** llama.cpp's LLAMA_FTYPE values, as users see them in file names. */
const QUANT_NAMES: Record<number, string> = {
  0: 'F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  7: 'Q8_0',
  8: 'Q5_0',
  9: 'Q5_1',
  10: 'Q2_K',
  11: 'Q3_K_S',
  12: 'Q3_K_M',
  13: 'Q3_K_L',
  14: 'Q4_K_S',
  15: 'Q4_K_M',
  16: 'Q5_K_S',
  17: 'Q5_K_M',
  18: 'Q6_K',
  32: 'BF16',
}
export const quantName = (fileType: number | null): string | null =>
  fileType === null ? null : (QUANT_NAMES[fileType] ?? `type ${fileType}`)

/** Reads forward through a file in chunks, so a header with a 150k-token vocabulary costs a few reads. */
class Cursor {
  private buf = Buffer.alloc(0)
  private at = 0
  private filePos = 0
  constructor(private readonly fd: number) {}
  private need(n: number): void {
    if (this.at + n <= this.buf.length) return
    const rest = this.buf.subarray(this.at)
    const chunk = Buffer.alloc(Math.max(n, 1 << 20))
    const got = readSync(this.fd, chunk, 0, chunk.length, this.filePos)
    this.filePos += got
    this.buf = Buffer.concat([rest, chunk.subarray(0, got)])
    this.at = 0
    if (this.buf.length < n) throw new Error('the file ends inside its header')
  }
  bytes(n: number): Buffer {
    this.need(n)
    const b = this.buf.subarray(this.at, this.at + n)
    this.at += n
    return b
  }
  u32 = () => this.bytes(4).readUInt32LE()
  u64(): number {
    const v = this.bytes(8).readBigUInt64LE()
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('a length in the header is out of range')
    return Number(v)
  }
  str(): string {
    const n = this.u64()
    if (n > 64 << 20) throw new Error('a string in the header is out of range')
    return this.bytes(n).toString('utf8')
  }
}

const SCALAR_SIZE: Record<number, number> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
}

function readValue(c: Cursor, type: number): unknown {
  switch (type) {
    case 4:
      return c.u32()
    case 5:
      return c.bytes(4).readInt32LE()
    case 10:
      return c.u64()
    case 8:
      return c.str()
    case 9: {
      const elem = c.u32()
      const count = c.u64()
      // Arrays (the vocabulary, its scores) are skipped: only their length is kept.
      if (elem === 8) for (let i = 0; i < count; i++) c.str()
      else if (SCALAR_SIZE[elem] !== undefined) c.bytes(SCALAR_SIZE[elem] * count)
      else throw new Error(`an array of unknown type ${elem}`)
      return count
    }
    default: {
      const size = SCALAR_SIZE[type]
      if (size === undefined) throw new Error(`a value of unknown type ${type}`)
      c.bytes(size)
      return null
    }
  }
}

/**
 * Memory a model takes to run with `context` tokens, estimated from its header: the weights
 * (the file's size) plus the KV cache (f16 keys and values per layer) plus a tenth for llama.cpp's
 * buffers. An estimate for "does it fit", not a promise.
 */
export function memoryEstimate(h: GgufHeader | null, fileSize: number, context: number): number {
  const kv =
    h?.layers && h.embedding_length && h.heads && h.kv_heads
      ? 2 * h.layers * context * (h.embedding_length / h.heads) * h.kv_heads * 2
      : 0
  return Math.round((fileSize + kv) * 1.1)
}

/** Reads a GGUF header. Throws an Error saying what is wrong when the file is not a readable GGUF. */
export function readGgufHeader(path: string): GgufHeader {
  const fd = openSync(path, 'r')
  try {
    const c = new Cursor(fd)
    if (c.bytes(4).toString('latin1') !== 'GGUF') throw new Error('it does not start like a GGUF file')
    const version = c.u32()
    if (version < 2 || version > 3) throw new Error(`GGUF version ${version} is not supported`)
    c.u64() // tensor count
    const count = c.u64()
    const meta = new Map<string, unknown>()
    for (let i = 0; i < count; i++) {
      const key = c.str()
      meta.set(key, readValue(c, c.u32()))
    }
    const architecture = meta.get('general.architecture')
    if (typeof architecture !== 'string') throw new Error('its header names no architecture')
    const num = (k: string) => (typeof meta.get(k) === 'number' ? (meta.get(k) as number) : null)
    const name = meta.get('general.name')
    return {
      architecture,
      name: typeof name === 'string' && name.trim() ? name.trim() : null,
      context_length: num(`${architecture}.context_length`),
      file_type: num('general.file_type'),
      has_chat_template: typeof meta.get('tokenizer.chat_template') === 'string',
      layers: num(`${architecture}.block_count`),
      embedding_length: num(`${architecture}.embedding_length`),
      heads: num(`${architecture}.attention.head_count`),
      kv_heads: num(`${architecture}.attention.head_count_kv`) ?? num(`${architecture}.attention.head_count`),
    }
  } finally {
    closeSync(fd)
  }
}
