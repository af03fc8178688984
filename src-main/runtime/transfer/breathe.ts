/**
 * Lets the event loop run between the pages of a long export or the chunks of an import: 100,000
 * messages took 2.9 s to read and write out, with every window and stream of the app stopped
 * until they were done. Two turns, not one: what the hosts send at the end of a turn (their
 * answers, corked until then) is queued behind the first, so it leaves before the next chunk
 * runs instead of after it (a client's ping waited two chunks, 60–70 ms, instead of one).
 */
export const breathe = (): Promise<void> =>
  new Promise((resolve) => setImmediate(() => setImmediate(resolve)))
