import type { CatalogueModel } from '../../../src-shared/local-models'

/**
 * A few well-known small instruct models, each one GGUF file on Hugging Face (Q4_K_M, the
 * usual balance of size and quality), with about how much memory it needs to run with a
 * 4k-token context. Offered in Settings → Local models for a one-click download; the sizes
 * are the publishers' and are checked against what the server sends.
 */
export const CATALOGUE: CatalogueModel[] = [
  {
    name: 'Qwen2.5 0.5B Instruct',
    publisher: 'Qwen',
    url: 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf',
    size: 491_000_000,
    memory: 1_000_000_000,
    quantisation: 'Q4_K_M',
    context_length: 32_768,
    note: 'Tiny and fast; fine for quick questions, weak at reasoning.',
  },
  {
    name: 'Llama 3.2 1B Instruct',
    publisher: 'Meta (quantised by bartowski)',
    url: 'https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf',
    size: 808_000_000,
    memory: 1_500_000_000,
    quantisation: 'Q4_K_M',
    context_length: 131_072,
    note: 'Small, good at following instructions and tool calls.',
  },
  {
    name: 'Qwen2.5 1.5B Instruct',
    publisher: 'Qwen',
    url: 'https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf',
    size: 1_120_000_000,
    memory: 2_000_000_000,
    quantisation: 'Q4_K_M',
    context_length: 32_768,
    note: 'A good first model on a laptop: quick, multilingual, can call tools.',
  },
  {
    name: 'Llama 3.2 3B Instruct',
    publisher: 'Meta (quantised by bartowski)',
    url: 'https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q4_K_M.gguf',
    size: 2_020_000_000,
    memory: 3_500_000_000,
    quantisation: 'Q4_K_M',
    context_length: 131_072,
    note: 'Noticeably smarter; wants 8 GB of memory or a GPU.',
  },
  {
    name: 'Phi-3.5 mini Instruct',
    publisher: 'Microsoft (quantised by bartowski)',
    url: 'https://huggingface.co/bartowski/Phi-3.5-mini-instruct-GGUF/resolve/main/Phi-3.5-mini-instruct-Q4_K_M.gguf',
    size: 2_390_000_000,
    memory: 4_000_000_000,
    quantisation: 'Q4_K_M',
    context_length: 131_072,
    note: 'Strong at reasoning and code for its size.',
  },
]
