/**
 * When one connection's frames leave the host.
 *
 * A page renders at most once an animation frame, so a window that only watches (a second
 * window on the same chat, a sidebar following every session) gains nothing from frames written
 * to it more often than that, and each write costs the host a syscall, the kernel a wake-up of
 * the reader and the browser's network process a read and a hand-off to the page. With turns
 * following each other every few milliseconds, one watching tab made the host's prompt → first
 * delta 1.5–2 ms slower (issue 10 item 3) — a write per event per connection — and the same
 * with the tab frozen, so it was the writing, not the tab's rendering.
 *
 * So a connection's events go out at once when it has had nothing for a frame (FRAME_MS: the
 * first word of a reply, a dialog, any event after a pause is not delayed), and otherwise wait
 * and leave together at most one frame after its last write. The connection whose request the
 * host is handling in this turn of the event loop gets everything at once (its answer and first
 * delta wait for nothing). What another connection's request causes reaches the others a frame
 * later, in one write: the caller's frames leave first, and a short turn (the prompt, its
 * messages, a few words and the end) costs a watching page one render, not two. When a session
 * stops (`settle`: its turn ended, or it waits for the user), what is queued leaves as that turn
 * of the event loop ends, not at the frame: a short turn is one write as soon as it is over
 * (3.3 ms after the prompt here, not 17), and a stream's last words are not held back. That is
 * for a session the connection acts on (it prompted, answered, steered… there). For one it only
 * watches, a connection written to less than a frame ago waits for its frame all the same: turns
 * that end a millisecond apart (a client prompting back to back) would otherwise cost it a write,
 * and its browser a wake-up, per turn, on the cores the caller's next prompt needs (issue 10
 * item 3: 0.2–0.6 ms more per prompt with one such page open, and about as much with the page
 * frozen).
 * An answer to a request never waits for the pacing, only for another connection's turn to end:
 * what is queued before it goes with it, in order. One connection's frames always keep their
 * order.
 */

/** A frame at 60 Hz: events closer together than this reach a watching page in one write. */
export const FRAME_MS = 16

/**
 * Frames are opaque here (`F`): the WebSocket host queues events as objects and serializes each
 * only when it is written, so what waits for a watching page costs the caller's turn nothing.
 */
export interface OutboxIo<F> {
  /** Writes one frame; `urgent`: and hands what is corked to the kernel now. */
  write(frame: F, urgent: boolean): void
  /** Whose request the host is handling in this turn of the event loop: this connection's, another's, or none. */
  handling(): 'me' | 'other' | null
  now(): number
  /** Runs `fn` once this turn of the event loop is over (setImmediate). */
  afterTurn(fn: () => void): void
  setTimer(fn: () => void, ms: number): unknown
  clearTimer(timer: unknown): void
}

export interface Outbox<F> {
  /** An event (`urgent`: the first delta of a burst, which the caller's connection sends at once). */
  event(frame: F, urgent?: boolean): void
  /** The answer to a request: after what is queued, without waiting. */
  reply(frame: F): void
  /** Writes what is queued now. */
  flush(): void
  /**
   * A session stopped (its turn ended, or it waits for the user): what is queued leaves when this
   * turn of the event loop ends, not a frame later — the end of a short turn is its last event.
   * `watching`: a session this connection only watches; written to less than a frame ago, the
   * connection keeps the frame's pace instead.
   */
  settle(watching: boolean): void
  /** The connection closed: nothing more is written. */
  close(): void
}

export function createOutbox<F>(io: OutboxIo<F>, frameMs = FRAME_MS): Outbox<F> {
  let queued: F[] | null = null
  let lastWrite = -Infinity
  let timer: unknown = null
  /** An answer waits in the queue (only for another connection's turn to end, never for pacing). */
  let answerQueued = false
  let closed = false
  /** A settle's flush waits for the end of this turn of the event loop. */
  let settling = false

  const write = (frame: F, urgent = false) => {
    lastWrite = io.now()
    io.write(frame, urgent)
  }
  const flush = () => {
    if (timer !== null) io.clearTimer(timer)
    timer = null
    answerQueued = false
    const frames = queued ?? []
    queued = null
    if (!closed) for (const frame of frames) write(frame)
  }

  return {
    event(frame, urgent = false) {
      if (closed) return
      const handling = io.handling()
      if (handling === 'me') {
        flush()
        return write(frame, urgent)
      }
      if (queued) return void queued.push(frame)
      if (handling === null && io.now() - lastWrite >= frameMs) return write(frame, urgent)
      queued = [frame]
      // Another connection's turn: the rest of it joins this write, a frame from now.
      timer = io.setTimer(flush, handling === 'other' ? frameMs : lastWrite + frameMs - io.now())
    },
    reply(frame) {
      if (closed) return
      // While another connection's request is handled: behind what is queued, as that turn ends.
      if (queued && io.handling() === 'other') {
        queued.push(frame)
        if (!answerQueued) io.afterTurn(flush)
        answerQueued = true
        return
      }
      flush()
      write(frame)
    },
    flush,
    settle(watching) {
      if (closed || !queued || settling) return
      // Written to within the frame: the frame's timer, already set, sends it.
      if (watching && io.now() - lastWrite < frameMs) return
      settling = true
      io.afterTurn(() => {
        settling = false
        if (queued) flush()
      })
    },
    close() {
      closed = true
      if (timer !== null) io.clearTimer(timer)
      timer = null
      queued = null
    },
  }
}
