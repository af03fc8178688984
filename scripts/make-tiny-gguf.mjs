#!/usr/bin/env node
/**
 * Writes a tiny llama-architecture GGUF (about 450 KB) for tests and the bench: no download, no
 * Python, no real weights. `node scripts/make-tiny-gguf.mjs OUT.gguf [--endless] [--think] [--seed N]`
 *
 * - Vocabulary: SentencePiece-style ("llama") with <unk>, <s>, </s>, the 256 byte tokens
 *   <0x00>..<0xFF>, "▁" (the space), <think> and </think>, so any text tokenizes (by byte fallback).
 * - 2 layers, 64 dims, 4 heads, a ChatML chat template in tokenizer.chat_template.
 * - Attention and feed-forward weights are small random numbers (seeded). The token embedding
 *   and output matrices are laid out so the model behaves like a bigram table: after any
 *   token outside the chain it writes "l", after "l" it writes "m", … "z", "a", … "k", then it
 *   ends the reply (</s>); `--endless` goes from "k" back to "l", so it writes until stopped;
 *   `--think` wraps the first half in <think>…</think> (two tokens of the vocabulary).
 *   Its second choice after every token is a double quote, so inside a grammar-constrained
 *   JSON string it writes the alphabet and then closes the string. Tests can therefore ask
 *   for replies that finish, replies that never do, and tool calls that complete, all
 *   deterministically (what it writes is still nonsense; tests never assert on it).
 */
import { writeFileSync } from 'node:fs'
import { basename, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const GGUF = { U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9, U64: 10 }
const ALIGN = 32

const CHATML =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

/** A seeded PRNG (mulberry32), so the same seed writes the same bytes. */
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

class Writer {
  chunks = []
  size = 0
  push(buf) {
    this.chunks.push(buf)
    this.size += buf.length
  }
  u32(v) {
    const b = Buffer.alloc(4)
    b.writeUInt32LE(v)
    this.push(b)
  }
  i32(v) {
    const b = Buffer.alloc(4)
    b.writeInt32LE(v)
    this.push(b)
  }
  u64(v) {
    const b = Buffer.alloc(8)
    b.writeBigUInt64LE(BigInt(v))
    this.push(b)
  }
  f32(v) {
    const b = Buffer.alloc(4)
    b.writeFloatLE(v)
    this.push(b)
  }
  str(s) {
    const b = Buffer.from(s, 'utf8')
    this.u64(b.length)
    this.push(b)
  }
  pad() {
    const n = (ALIGN - (this.size % ALIGN)) % ALIGN
    if (n) this.push(Buffer.alloc(n))
  }
}

function kv(w, key, type, value) {
  w.str(key)
  w.u32(type)
  if (type === GGUF.U32) w.u32(value)
  else if (type === GGUF.F32) w.f32(value)
  else if (type === GGUF.STRING) w.str(value)
  else if (type === GGUF.ARRAY) {
    const [elem, items] = value
    w.u32(elem)
    w.u64(items.length)
    for (const it of items)
      if (elem === GGUF.STRING) w.str(it)
      else if (elem === GGUF.F32) w.f32(it)
      else if (elem === GGUF.I32) w.i32(it)
  }
}

/** Builds the GGUF file's bytes. */
export function tinyGguf({
  endless = false,
  think = false,
  seed = 13,
  contextLength = 8192,
  name,
  // Only for tests of listing: another architecture's name in the header (llama.cpp would not load it).
  architecture = 'llama',
} = {}) {
  const random = rng(seed)
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
  const nEmbd = 64
  const nFf = 128
  const nHead = 4
  const nLayer = 2

  // Vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3..258 the bytes, 259 "▁".
  const tokens = ['<unk>', '<s>', '</s>']
  const types = [2, 3, 3]
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)
    types.push(6)
  }
  tokens.push('\u2581', '<think>', '</think>')
  types.push(1, 4, 4)
  const nVocab = tokens.length
  const byteToken = (ch) => 3 + ch.charCodeAt(0)
  const EOS = 2

  // The bigram chain a → b → … → z → (</s> | a). Dimension 0 is shared by every token (it
  // carries the "second choice" bias), dimension 1 marks the tokens outside the chain and
  // dimensions 2.. mark each chain letter.
  // From "l", so of Arbor's tools (ask_user, list_directory, read_file, write_file) a call
  // the model must make names list_directory.
  const letters = [...'lmnopqrstuvwxyzabcdefghijk'].map(byteToken)
  // --think: "<think>lmnopqrstuvwxy</think>zabcdefghijk" (the tags are tokens of their own).
  const chain = think ? [260, ...letters.slice(0, 13), 261, ...letters.slice(13)] : letters
  const dimOf = new Map(chain.map((t, i) => [t, 2 + i]))
  const next = (t) => {
    const i = chain.indexOf(t)
    if (i < 0) return chain[0]
    if (i === chain.length - 1) return endless ? chain[0] : EOS
    return chain[i + 1]
  }
  const A = 4 // weight of a token's own dimension in its embedding
  const B = 4 // weight of the successor link in the output matrix
  const QUOTE_BIAS = 6 // the double quote's second place
  const noise = (std) => gauss() * std

  const embd = new Float32Array(nVocab * nEmbd)
  for (let t = 0; t < nVocab; t++) {
    for (let i = 0; i < nEmbd; i++) embd[t * nEmbd + i] = noise(0.01)
    embd[t * nEmbd] = 1
    embd[t * nEmbd + (dimOf.get(t) ?? 1)] += A
  }
  const out = new Float32Array(nVocab * nEmbd)
  for (let i = 0; i < out.length; i++) out[i] = noise(0.01)
  // Row k of the links: from the outside class (dimension 1), then from each letter.
  const links = [[1, chain[0]], ...chain.map((t) => [dimOf.get(t), next(t)])]
  for (const [dim, successor] of links) out[successor * nEmbd + dim] += B
  out[byteToken('"') * nEmbd] += QUOTE_BIAS

  const ones = (n) => new Float32Array(n).fill(1)
  const rand = (n) => Float32Array.from({ length: n }, () => noise(0.02))
  /** [name, dims (ne0 first), data] */
  const tensors = [
    ['token_embd.weight', [nEmbd, nVocab], embd],
    ['output_norm.weight', [nEmbd], ones(nEmbd)],
    ['output.weight', [nEmbd, nVocab], out],
  ]
  for (let l = 0; l < nLayer; l++) {
    const p = `blk.${l}.`
    tensors.push(
      [`${p}attn_norm.weight`, [nEmbd], ones(nEmbd)],
      [`${p}attn_q.weight`, [nEmbd, nEmbd], rand(nEmbd * nEmbd)],
      [`${p}attn_k.weight`, [nEmbd, nEmbd], rand(nEmbd * nEmbd)],
      [`${p}attn_v.weight`, [nEmbd, nEmbd], rand(nEmbd * nEmbd)],
      [`${p}attn_output.weight`, [nEmbd, nEmbd], rand(nEmbd * nEmbd)],
      [`${p}ffn_norm.weight`, [nEmbd], ones(nEmbd)],
      [`${p}ffn_gate.weight`, [nEmbd, nFf], rand(nEmbd * nFf)],
      [`${p}ffn_up.weight`, [nEmbd, nFf], rand(nEmbd * nFf)],
      [`${p}ffn_down.weight`, [nFf, nEmbd], rand(nFf * nEmbd)],
    )
  }

  const w = new Writer()
  w.push(Buffer.from('GGUF', 'ascii'))
  w.u32(3)
  w.u64(tensors.length)
  const meta = [
    ['general.architecture', GGUF.STRING, architecture],
    ['general.name', GGUF.STRING, name ?? (endless ? 'Tiny endless test model' : 'Tiny test model')],
    ['general.alignment', GGUF.U32, ALIGN],
    ['general.file_type', GGUF.U32, 0],
    [`${architecture}.context_length`, GGUF.U32, contextLength],
    [`${architecture}.embedding_length`, GGUF.U32, nEmbd],
    [`${architecture}.block_count`, GGUF.U32, nLayer],
    [`${architecture}.feed_forward_length`, GGUF.U32, nFf],
    [`${architecture}.attention.head_count`, GGUF.U32, nHead],
    [`${architecture}.attention.head_count_kv`, GGUF.U32, nHead],
    [`${architecture}.rope.dimension_count`, GGUF.U32, nEmbd / nHead],
    [`${architecture}.attention.layer_norm_rms_epsilon`, GGUF.F32, 1e-5],
    [`${architecture}.vocab_size`, GGUF.U32, nVocab],
    ['tokenizer.ggml.model', GGUF.STRING, 'llama'],
    ['tokenizer.ggml.tokens', GGUF.ARRAY, [GGUF.STRING, tokens]],
    ['tokenizer.ggml.scores', GGUF.ARRAY, [GGUF.F32, tokens.map(() => 0)]],
    ['tokenizer.ggml.token_type', GGUF.ARRAY, [GGUF.I32, types]],
    ['tokenizer.ggml.unknown_token_id', GGUF.U32, 0],
    ['tokenizer.ggml.bos_token_id', GGUF.U32, 1],
    ['tokenizer.ggml.eos_token_id', GGUF.U32, EOS],
    ['tokenizer.chat_template', GGUF.STRING, CHATML],
  ]
  w.u64(meta.length)
  for (const [k, t, v] of meta) kv(w, k, t, v)
  let offset = 0
  for (const [tname, shape, data] of tensors) {
    w.str(tname)
    w.u32(shape.length)
    for (const d of shape) w.u64(d)
    w.u32(0) // F32
    w.u64(offset)
    offset += Math.ceil((data.length * 4) / ALIGN) * ALIGN
  }
  w.pad()
  for (const [, , data] of tensors) {
    w.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength))
    w.pad()
  }
  return Buffer.concat(w.chunks)
}

export function writeTinyGguf(path, options = {}) {
  writeFileSync(path, tinyGguf(options))
  return path
}

// Run as a script (not when imported, nor when bundled into out/main/bench.js).
const self = fileURLToPath(import.meta.url)
if (basename(self) === 'make-tiny-gguf.mjs' && resolve(process.argv[1] ?? '') === self) {
  const args = process.argv.slice(2)
  const out = args.find((a) => !a.startsWith('--'))
  if (!out) {
    console.error('usage: node scripts/make-tiny-gguf.mjs OUT.gguf [--endless] [--think] [--seed N]')
    process.exit(2)
  }
  const seedAt = args.indexOf('--seed')
  writeTinyGguf(out, {
    endless: args.includes('--endless'),
    think: args.includes('--think'),
    ...(seedAt >= 0 ? { seed: Number(args[seedAt + 1]) } : {}),
  })
  console.log(out)
}
