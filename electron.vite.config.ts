import { resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import react from '@vitejs/plugin-react'

// electron-vite 6 only auto-discovers src/main, src/preload, src/renderer, so every entry is named here.
//
// Output (CommonJS, because package.json has no "type": "module"):
//   out/main/index.js      Electron main process (package.json "main")
//   out/main/serve.js      browser host: plain Node, no Electron (`node out/main/serve.js`)
//   out/main/bench.js      benchmark entry (`node --expose-gc out/main/bench.js`)
//   out/main/local-model-worker.js  the local-model worker thread (runtime/models/local/worker.ts)
//   out/main/bench-seed.js fills a data folder at bench sizes (used by scripts/ui-bench.mjs)
//   out/main/example-*.js  the seed's example against openRuntime() and connectArbor()
//   out/preload/index.js   sandboxed preload: fully bundled, only `electron` stays external
//   out/renderer/          React UI, relative asset URLs so it loads from file:// and http://

export default defineConfig({
  main: {
    build: {
      outDir: resolve(__dirname, 'out/main'),
      // Default, stated for clarity: dependencies (better-sqlite3, ws, zod, ...) and
      // Node builtins / electron stay external and are require()d at runtime.
      externalizeDeps: true,
      rolldownOptions: {
        input: {
          index: resolve(__dirname, 'src-main/index.ts'),
          serve: resolve(__dirname, 'src-main/serve.ts'),
          bench: resolve(__dirname, 'src-main/bench/index.ts'),
          chaos: resolve(__dirname, 'src-main/bench/chaos.ts'),
          'bench-seed': resolve(__dirname, 'src-main/bench/seed.ts'),
          // Full-text search on its own thread and read-only connection (see store/search-worker.ts).
          'search-worker': resolve(__dirname, 'src-main/store/search-worker.ts'),
          // Local GGUF models: llama.cpp (node-llama-cpp, external: ESM with native addons) on its own thread.
          'local-model-worker': resolve(__dirname, 'src-main/runtime/models/local/worker.ts'),
          // The seed's complete example, against openRuntime() and against connectArbor().
          'example-local': resolve(__dirname, 'examples/local.ts'),
          'example-remote': resolve(__dirname, 'examples/remote.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      outDir: resolve(__dirname, 'out/preload'),
      // A sandboxed preload can only require('electron') (and a few polyfilled builtins),
      // so bundle every dependency into the single output file.
      externalizeDeps: false,
      isolatedEntries: true,
      rolldownOptions: {
        input: { index: resolve(__dirname, 'src-preload/index.ts') },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src-renderer'),
    base: './',
    plugins: [react()],
    build: {
      outDir: resolve(__dirname, 'out/renderer'),
      minify: true,
      // Every asset a file of its own, never a data: URL in the CSS: the page's Content-Security-Policy
      // allows fonts only from 'self', so an inlined one (KaTeX_Size3, under Vite's 4 KB limit) was refused.
      assetsInlineLimit: 0,
      rolldownOptions: {
        input: { index: resolve(__dirname, 'src-renderer/index.html') },
      },
    },
  },
})
