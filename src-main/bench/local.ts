/**
 * Local models in `npm run bench`: tokens/s and time to first token of Arbor streaming a GGUF
 * model (worker thread → runtime → store → subscriber) against node-llama-cpp's own
 * LlamaChatSession on the same model, prompt, system prompt, tools, context and threads, in
 * the same run. The model is the tiny one of scripts/make-tiny-gguf.mjs, written to a temp
 * folder: a figure of the overhead around llama.cpp, which is the same code on both sides.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import type { defineChatSessionFunction as Define } from 'node-llama-cpp'
import { tinyGguf } from '../../scripts/make-tiny-gguf.mjs'
import { openRuntime } from '../runtime'
import { toFunctions } from '../runtime/models/local/history'
import { ToolRegistry } from '../runtime/tools'
import { median } from './stats'

type FunctionParams = Parameters<typeof Define>[0]['params']

const TOKENS = 1500
const PROMPT = 'Write a long answer.'
const THREADS = 1

interface Round {
  ttft_ms: number
  tokens_per_s: number
}

async function arborRound(dataDir: string): Promise<Round & { system: string }> {
  const rt = openRuntime({
    dataDir,
    log: () => {},
    local: {
      worker: resolve(__dirname, 'local-model-worker.js'),
      gpu: false,
      threads: THREADS,
      sampling: { max_tokens: TOKENS },
    },
  })
  try {
    const s = await rt.sessions.create()
    await s.set({ model: 'local/bench.gguf' })
    // A first turn loads the model; the measured one is the next (warm, as in a chat).
    await (
      await s.prompt({ query: 'Hello' })
    ).finished
    let first = 0
    let last = 0
    const off = s.subscribe((m) => {
      if (m.variant !== 'delta') return
      last = performance.now()
      if (!first) first = last
    })
    const t0 = performance.now()
    await (
      await s.prompt({ query: PROMPT })
    ).finished
    off()
    const reply = (await s.messages({ limit: 10 })).items
      .filter((m) => m.role === 'assistant' && m.kind === 'text')
      .at(-1)!
    const tokens = reply.usage?.output_tokens ?? 0
    return {
      ttft_ms: first - t0,
      tokens_per_s: tokens / ((last - first) / 1000),
      system: (await s.system()).system_prompt,
    }
  } finally {
    await rt.close()
  }
}

async function baselineRound(modelPath: string, system: string): Promise<Round> {
  const { getLlama, LlamaChatSession, defineChatSessionFunction } = await import('node-llama-cpp')
  const llama = await getLlama({ gpu: false, build: 'never' })
  const model = await llama.loadModel({ modelPath })
  const context = await model.createContext({ contextSize: 8192, threads: THREADS })
  try {
    const session = new LlamaChatSession({ contextSequence: context.getSequence(), systemPrompt: system })
    const functions = Object.fromEntries(
      Object.entries(toFunctions(new ToolRegistry().list()) ?? {}).map(([name, f]) => [
        name,
        defineChatSessionFunction({
          description: f.description,
          params: f.params as FunctionParams,
          handler: () => null,
        }),
      ]),
    )
    await session.prompt('Hello', { functions, maxTokens: TOKENS })
    let first = 0
    let last = 0
    let tokens = 0
    const t0 = performance.now()
    await session.prompt(PROMPT, {
      functions,
      maxTokens: TOKENS,
      onToken: (t) => {
        tokens += t.length
        last = performance.now()
        if (!first) first = last
      },
    })
    return { ttft_ms: first - t0, tokens_per_s: tokens / ((last - first) / 1000) }
  } finally {
    await context.dispose()
    await model.dispose()
    await llama.dispose()
  }
}

export async function localModelFigures(freshDir: () => string): Promise<void> {
  const modelDir = freshDir()
  const modelPath = join(modelDir, 'bench.gguf')
  writeFileSync(modelPath, tinyGguf({ endless: true }))
  const arbor: Round[] = []
  const base: Round[] = []
  // Alternating rounds; the median of each side is compared.
  for (let i = 0; i < 3; i++) {
    const dataDir = freshDir()
    mkdirSync(join(dataDir, 'models'))
    writeFileSync(join(dataDir, 'models', 'bench.gguf'), tinyGguf({ endless: true }))
    const a = await arborRound(dataDir)
    arbor.push(a)
    // The baseline is given the very system prompt Arbor sent.
    base.push(await baselineRound(modelPath, a.system))
  }
  const rate = median(arbor.map((r) => r.tokens_per_s))
  const baseRate = median(base.map((r) => r.tokens_per_s))
  const ratio = rate / baseRate
  console.log(
    `local model streaming (tiny GGUF, CPU, ${THREADS} thread, ${TOKENS} tokens): Arbor ${Math.round(rate)} tokens/s, ` +
      `LlamaChatSession ${Math.round(baseRate)} tokens/s, ${ratio.toFixed(2)}× (target ≥ 0.9×) ${ratio >= 0.9 ? 'OK' : 'MISSED'}`,
  )
  const ttft = median(arbor.map((r) => r.ttft_ms))
  const baseTtft = median(base.map((r) => r.ttft_ms))
  console.log(
    `local model time to first token (warm, same prompt): Arbor ${ttft.toFixed(1)} ms, ` +
      `LlamaChatSession ${baseTtft.toFixed(1)} ms, Arbor − baseline ${(ttft - baseTtft).toFixed(1)} ms (target ≤ 50 ms) ${ttft - baseTtft <= 50 ? 'OK' : 'MISSED'}`,
  )
}
