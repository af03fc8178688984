import { access } from 'node:fs/promises'
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'

/** The least share of a busy CPU a thread can ask for (nice 19). */
export const BACKGROUND_NICE = 19

/**
 * Gives the calling thread the least share of a busy CPU, for work nobody waits for (a backup, a
 * deferred integrity check): it still runs at full speed on an idle machine, and yields to the
 * host's event loop, the windows and everything else when the cores are busy. Only ever called
 * on a worker thread of its own: the main thread would slow the whole app.
 *
 * On Linux a thread is a task with a nice value of its own, named by /proc/thread-self, and the
 * threads it starts inherit it. libuv's thread pool is the process's, started by the first
 * thread that uses it: started from here after the lowering, it would serve every file read and
 * write of the app at nice 19 from then on. So it is started (if it is not yet) before.
 * Elsewhere (no /proc, or a value not permitted) the thread keeps the process's priority: false.
 */
export async function lowerThisThread(nice = BACKGROUND_NICE): Promise<boolean> {
  await access('/').catch(() => {})
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (!Number.isInteger(tid) || tid <= 0) return false
    setPriority(tid, nice)
    return true
  } catch {
    return false
  }
}
