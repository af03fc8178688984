import { ArborError } from '../../src-shared/errors'
import { newId } from '../../src-shared/ids'
import { MAX_IMPORT_CHARS } from '../../src-shared/schemas'

/**
 * Chat files crossing a transport in pieces, per connection (the router's `sessions.export_open`
 * / `export_read` and `sessions.import_write` / `import_commit`): an export waits here in parts
 * until the client has read the last one; an import's pieces wait until it is committed. One
 * 30 MB request or answer held the host's event loop for 120–480 ms (unmasking, decoding and
 * parsing or serialising it in one go); a piece takes a few milliseconds, and other requests
 * are answered between two pieces.
 *
 * A transfer left unfinished (the client went away mid-way without closing, or stopped
 * reading) is dropped after `IDLE_MS` without use, and all of a connection's when it closes.
 */
export const IDLE_MS = 10 * 60 * 1000
/** Transfers one connection may have open at once. */
export const MAX_OPEN = 8

type Transfer =
  | { kind: 'export'; parts: string[]; read: Set<number>; used: number }
  | { kind: 'import'; parts: string[]; chars: number; used: number }

export class Transfers {
  private readonly byPeer = new Map<string, Map<string, Transfer>>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Keeps an export's parts for the peer; returns the transfer's id. */
  openExport(peer_id: string, parts: string[]): string {
    return this.open(peer_id, { kind: 'export', parts, read: new Set(), used: this.now() })
  }

  /** One part of an export; the transfer ends once every part has been read. */
  read(peer_id: string, transfer_id: string, index: number): string {
    const t = this.get(peer_id, transfer_id, 'export')
    if (index >= t.parts.length)
      throw new ArborError(
        'invalid_request',
        `The export ${transfer_id} has ${t.parts.length} parts (0 to ${t.parts.length - 1}); there is no part ${index}.`,
      )
    t.read.add(index)
    if (t.read.size === t.parts.length) this.byPeer.get(peer_id)?.delete(transfer_id)
    return t.parts[index]!
  }

  /** Adds a piece to an import (a new one without `transfer_id`); returns its id and length so far. */
  write(
    peer_id: string,
    transfer_id: string | undefined,
    text: string,
  ): { transfer_id: string; chars: number } {
    if (transfer_id === undefined) {
      this.checkSize(text.length)
      const id = this.open(peer_id, { kind: 'import', parts: [text], chars: text.length, used: this.now() })
      return { transfer_id: id, chars: text.length }
    }
    const t = this.get(peer_id, transfer_id, 'import')
    try {
      this.checkSize(t.chars + text.length)
    } catch (err) {
      // The import cannot go on: what it holds goes now, not in 10 minutes.
      this.byPeer.get(peer_id)?.delete(transfer_id)
      throw err
    }
    t.parts.push(text)
    t.chars += text.length
    return { transfer_id, chars: t.chars }
  }

  /** An import's pieces, and the transfer ends (whether the import then succeeds or not). */
  take(peer_id: string, transfer_id: string): string[] {
    const t = this.get(peer_id, transfer_id, 'import')
    this.byPeer.get(peer_id)?.delete(transfer_id)
    return t.parts
  }

  /** Characters held for every connection's transfers (what they cost in memory, halved). */
  held(): number {
    let n = 0
    for (const mine of this.byPeer.values())
      for (const t of mine.values()) for (const part of t.parts) n += part.length
    return n
  }

  /** The connection closed: its transfers end. */
  drop(peer_id: string): void {
    this.byPeer.delete(peer_id)
  }

  private checkSize(chars: number): void {
    if (chars > MAX_IMPORT_CHARS)
      throw new ArborError(
        'payload_too_large',
        `The chat file is larger than ${MAX_IMPORT_CHARS / (1024 * 1024)} MB, more than Arbor imports.`,
      )
  }

  private open(peer_id: string, t: Transfer): string {
    // Those left unused by any connection go first (an Electron window's lives as long as it).
    for (const [peer, theirs] of this.byPeer) {
      for (const [id, old] of theirs) if (this.now() - old.used > IDLE_MS) theirs.delete(id)
      if (theirs.size === 0) this.byPeer.delete(peer)
    }
    const mine = this.byPeer.get(peer_id) ?? new Map<string, Transfer>()
    this.byPeer.set(peer_id, mine)
    if (mine.size >= MAX_OPEN)
      throw new ArborError(
        'conflict',
        `${MAX_OPEN} exports or imports are already in progress on this connection; wait for one to finish.`,
      )
    const id = newId('xfr')
    mine.set(id, t)
    return id
  }

  private get<K extends Transfer['kind']>(
    peer_id: string,
    transfer_id: string,
    kind: K,
  ): Extract<Transfer, { kind: K }> {
    const mine = this.byPeer.get(peer_id)
    const t = mine?.get(transfer_id)
    if (t && this.now() - t.used > IDLE_MS) mine!.delete(transfer_id)
    else if (t && t.kind === kind) {
      t.used = this.now()
      return t as Extract<Transfer, { kind: K }>
    }
    const what = kind === 'export' ? 'export' : 'import'
    throw new ArborError(
      'not_found',
      `No ${what} ${transfer_id} is in progress on this connection (it finished, was unused for ${IDLE_MS / 60_000} minutes, or was started on another connection). Start the ${what} again.`,
    )
  }
}
