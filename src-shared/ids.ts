/**
 * Opaque, time-sortable ids. A prefix names the kind of id so that a `turn_id` can never be
 * mistaken for a `run_id` in logs or payloads; the rest is 12 hex digits of milliseconds and
 * 16 of randomness, so ids sort by creation time (like ULID / UUIDv7).
 */
export type IdKind = 'ses' | 'msg' | 'prt' | 'turn' | 'run' | 'snap' | 'int' | 'cmd' | 'op' | 'sub' | 'tc'

let lastMs = 0
let counter = 0

export function newId(kind: IdKind): string {
  const now = Date.now()
  // Within one millisecond a counter keeps ids strictly increasing in this process.
  counter = now === lastMs ? counter + 1 : 0
  lastMs = now
  const bytes = new Uint8Array(6)
  globalThis.crypto.getRandomValues(bytes)
  const rand = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${kind}_${now.toString(16).padStart(12, '0')}${counter.toString(16).padStart(4, '0')}${rand}`
}
