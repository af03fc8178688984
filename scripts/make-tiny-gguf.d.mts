export interface TinyGgufOptions {
  /** Never end a reply (it writes until stopped or the output limit). */
  endless?: boolean
  /** Wrap the first half of each reply in <think>…</think>. */
  think?: boolean
  seed?: number
  contextLength?: number
  name?: string
  /** Another architecture's name in the header (for listing tests; llama.cpp would not load it). */
  architecture?: string
}
export declare function tinyGguf(options?: TinyGgufOptions): Buffer
export declare function writeTinyGguf(path: string, options?: TinyGgufOptions): string
