/**
 * Lets the event loop run between the pages of a long export: 100,000 messages took 2.9 s to
 * read and write out, with every window and stream of the app stopped until they were done.
 */
export const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
