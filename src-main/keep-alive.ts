/**
 * The host process never dies of one failure it did not expect: the error is logged and the
 * process keeps serving every other session. (Each state change is one transaction, so a
 * failure mid-way leaves nothing half-written to protect by exiting.)
 */
export function keepAlive(log: (message: string) => void = (m) => console.error(m)): void {
  const describe = (err: unknown) => (err instanceof Error ? (err.stack ?? err.message) : String(err))
  process.on('unhandledRejection', (err) =>
    log(`[arbor] unhandled rejection, host kept running: ${describe(err)}`),
  )
  process.on('uncaughtException', (err) =>
    log(`[arbor] uncaught exception, host kept running: ${describe(err)}`),
  )
}
