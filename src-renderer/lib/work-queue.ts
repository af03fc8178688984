/**
 * Work that may wait a little, done in small slices between frames so it never stalls one:
 * markdown blocks a long or streaming reply shows as plain text until they are parsed. Each
 * slice runs just after a frame (or after a timer in a window that gets no frames), runs jobs
 * until `budget` ms have passed (always at least one), and leaves the rest for the next slice.
 * The newest job runs first: the block that came last is the one nearest the reader.
 */
export interface WorkQueue {
  /** Queues a job; the returned function takes it back if it has not run yet. */
  add(job: () => void): () => void
  /** Jobs waiting. */
  size(): number
}

export interface WorkQueueOptions {
  /** Calls `run` once, some time after the next frame. */
  schedule(run: () => void): void
  now(): number
  /** Milliseconds of work per slice. */
  budget: number
}

export function createWorkQueue({ schedule, now, budget }: WorkQueueOptions): WorkQueue {
  // A stack (newest on top); a job taken back stays in it, marked, until it is popped.
  const stack: { job: () => void; live: boolean }[] = []
  let live = 0
  let scheduled = false
  const kick = () => {
    if (scheduled || live === 0) return
    scheduled = true
    schedule(slice)
  }
  const slice = () => {
    scheduled = false
    const t0 = now()
    do {
      const entry = stack.pop()
      if (!entry) break
      if (!entry.live) continue
      entry.live = false
      live--
      entry.job()
    } while (live > 0 && now() - t0 < budget)
    kick()
  }
  return {
    add(job) {
      const entry = { job, live: true }
      stack.push(entry)
      live++
      kick()
      return () => {
        if (!entry.live) return
        entry.live = false
        live--
      }
    },
    size: () => live,
  }
}

/**
 * After the next frame has painted (a task posted from requestAnimationFrame runs once the
 * frame is done), with a timer fallback: hidden windows get no frames.
 */
export function afterFrame(run: () => void): void {
  let done = false
  const once = () => {
    if (done) return
    done = true
    run()
  }
  if (typeof requestAnimationFrame === 'function' && typeof MessageChannel === 'function') {
    requestAnimationFrame(() => {
      const ch = new MessageChannel()
      ch.port1.onmessage = () => {
        ch.port1.close()
        once()
      }
      ch.port2.postMessage(0)
    })
  }
  setTimeout(once, 100)
}
