/**
 * The host process never dies of one failure it did not expect: the error is logged and the
 * process keeps serving every other session. (Each state change is one transaction, so a
 * failure mid-way leaves nothing half-written to protect by exiting.)
 *
 * Its own output going nowhere is not such a failure either. When whatever read the host's
 * stdout or stderr goes away (a closed terminal tab, the script that started it killed), every
 * write there fails with EPIPE, reported as an 'error' event on the stream. With no listener
 * that was an uncaught exception, whose log line failed in turn: a loop that kept a core busy
 * for as long as the host ran (found as an orphaned host at 90% CPU an hour after its bench
 * died). Those errors are dropped: the host goes on serving, silently.
 */
export function keepAlive(log: (message: string) => void = (m) => console.error(m)): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {})
  const describe = (err: unknown) => (err instanceof Error ? (err.stack ?? err.message) : String(err))
  process.on('unhandledRejection', (err) =>
    log(`[arbor] unhandled rejection, host kept running: ${describe(err)}`),
  )
  process.on('uncaughtException', (err) =>
    log(`[arbor] uncaught exception, host kept running: ${describe(err)}`),
  )
}
