import { configDefaults, defineConfig } from 'vitest/config'
import react from '@vitejs/plugin-react'

/**
 * Test files whose assertions are shares of the CPU: the checkpoint thread's restarts race a
 * writer on the same two cores. Beside the other test files (two forks and the renderer's
 * project on a 2-core machine) the thread got so little time that the log once reached 20 % of
 * all written (12,123 pages against a bound of 5,052; 4.6-5.9 % alone), so they run on their
 * own, after the rest.
 */
const ALONE = ['test/main/checkpoint-thread.test.ts']

// Three projects: `npx vitest run --project main`, `--project main-alone` or `--project renderer`
// runs one of them.
export default defineConfig({
  test: {
    passWithNoTests: false,
    projects: [
      {
        test: {
          name: 'main',
          environment: 'node',
          include: ['test/main/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ALONE],
          // better-sqlite3 is a native addon: child processes are safer than worker threads.
          pool: 'forks',
          testTimeout: 20_000,
          hookTimeout: 20_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'renderer',
          environment: 'happy-dom',
          include: ['test/renderer/**/*.test.{ts,tsx}'],
          testTimeout: 10_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'main-alone',
          environment: 'node',
          include: ALONE,
          pool: 'forks',
          fileParallelism: false,
          testTimeout: 20_000,
          hookTimeout: 20_000,
          // After the two projects above have finished: nothing else runs meanwhile.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
