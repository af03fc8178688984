/**
 * Opaque, time-sortable ids. A prefix names the kind of id so that a `turn_id` can never be
 * mistaken for a `run_id` in logs or payloads. The rest is Crockford base32: 10 characters of
 * milliseconds, 2 of an in-process counter (strictly increasing within one millisecond; an id
 * past the 1,024th of a millisecond takes the next one) and 8 of randomness (40 bits), so ids
 * sort by creation time like ULIDs while staying short — they are repeated in every row and
 * index of the store.
 */
export type IdKind =
  'ses' | 'msg' | 'prt' | 'turn' | 'run' | 'snap' | 'int' | 'cmd' | 'op' | 'sub' | 'tc' | 'dl' | 'imp' | 'xfr'

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

function base32(value: number, length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) {
    out = ALPHABET[value % 32] + out
    value = Math.floor(value / 32)
  }
  return out
}

let lastMs = 0
let counter = 0
/** Two base32 characters of counter. */
const COUNTER_MAX = 1024

/**
 * Random bytes drawn in blocks: one `getRandomValues` call costs ~15 µs here whatever its size,
 * and a prompt makes half a dozen ids before its first delta (issue 10 item 3).
 */
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let taken = POOL_BYTES

function randomBytes5(): Uint8Array {
  if (taken + 5 > POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool)
    taken = 0
  }
  taken += 5
  return pool.subarray(taken - 5, taken)
}

export function newId(kind: IdKind): string {
  let now = Date.now()
  if (now > lastMs) counter = 0
  else {
    // The same millisecond (or a clock that went back): the next counter, and past the last
    // one the next millisecond, so ids stay strictly increasing in this process.
    now = lastMs
    if (++counter >= COUNTER_MAX) {
      now += 1
      counter = 0
    }
  }
  lastMs = now
  const bytes = randomBytes5()
  let rand = ''
  // 40 random bits as 8 base32 characters.
  let bits = 0
  let acc = 0
  for (const b of bytes) {
    acc = (acc << 8) | b
    bits += 8
    while (bits >= 5) {
      bits -= 5
      rand += ALPHABET[(acc >> bits) & 31]
    }
  }
  return `${kind}_${base32(now, 10)}${base32(counter, 2)}${rand}`
}
