import { defineConfig } from 'vitest/config'
import react from '@vitejs/plugin-react'

// Two projects: `npx vitest run --project main` or `--project renderer` runs one of them.
export default defineConfig({
  test: {
    passWithNoTests: false,
    projects: [
      {
        test: {
          name: 'main',
          environment: 'node',
          include: ['test/main/**/*.test.ts'],
          // better-sqlite3 is a native addon: child processes are safer than worker threads.
          pool: 'forks',
          testTimeout: 20_000,
          hookTimeout: 20_000,
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'renderer',
          environment: 'happy-dom',
          include: ['test/renderer/**/*.test.{ts,tsx}'],
          testTimeout: 10_000,
        },
      },
    ],
  },
})
