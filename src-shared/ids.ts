/**
 * Opaque, time-sortable ids. A prefix names the kind of id so that a `turn_id` can never be
 * mistaken for a `run_id` in logs or payloads. The rest is Crockford base32: 10 characters of
 * milliseconds, 2 of an in-process counter (strictly increasing within one millisecond) and 8
 * of randomness (40 bits), so ids sort by creation time like ULIDs while staying short — they
 * are repeated in every row and index of the store.
 */
export type IdKind =
  'ses' | 'msg' | 'prt' | 'turn' | 'run' | 'snap' | 'int' | 'cmd' | 'op' | 'sub' | 'tc' | 'dl'

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

export function newId(kind: IdKind): string {
  const now = Date.now()
  counter = now === lastMs ? counter + 1 : 0
  lastMs = now
  const bytes = new Uint8Array(5)
  globalThis.crypto.getRandomValues(bytes)
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
  return `${kind}_${base32(now, 10)}${base32(counter % 1024, 2)}${rand}`
}
