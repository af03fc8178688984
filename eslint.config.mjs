// @ts-check
import { builtinModules } from 'node:module'
import js from '@eslint/js'
import { defineConfig, globalIgnores } from 'eslint/config'
import tseslint from 'typescript-eslint'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'

// ---- layer rules ------------------------------------------------------------------------------
// src-shared:  pure TS, runs in both worlds -> no electron, react or Node.
// src-main/runtime, src-main/store: must run under plain Node (tests, browser host) -> no electron.
// src-renderer: browser only -> no electron, no Node.

const nodeBuiltins = builtinModules.filter((m) => !m.startsWith('_'))

/** @param {string} where */
const noNode = (where) => ({
  paths: nodeBuiltins.map((name) => ({ name, message: `${where} must not use Node built-ins.` })),
  patterns: [{ group: ['node:*'], message: `${where} must not use Node built-ins.` }],
})
/** @param {string} where */
const noElectron = (where) => ({
  name: 'electron',
  message: `${where} must not import electron: it has to run without the Electron binary.`,
})

/** @param {...{ paths?: unknown[], patterns?: unknown[] }} parts */
const restrict = (...parts) => [
  'error',
  {
    paths: parts.flatMap((p) => p.paths ?? []),
    patterns: parts.flatMap((p) => p.patterns ?? []),
  },
]

const domGlobals = ['window', 'document', 'localStorage', 'sessionStorage', 'navigator'].map((name) => ({
  name,
  message: 'No DOM globals outside the renderer.',
}))
const nodeGlobals = ['process', 'Buffer', 'require', '__dirname', '__filename', 'global'].map((name) => ({
  name,
  message: 'src-shared must stay free of Node globals.',
}))

export default defineConfig(
  globalIgnores([
    'out/',
    'dist/',
    'node_modules/',
    'playwright-report/',
    'test-results/',
    'docs/',
    '.arbor-data/',
    'coverage/',
  ]),

  js.configs.recommended,
  tseslint.configs.recommended,

  {
    files: ['**/*.{js,mjs,cjs,ts,mts,cts,tsx}'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },

  // Node: main process, browser host, preload, tests, e2e, scripts and tool configs.
  {
    files: [
      'src-main/**',
      'src-preload/**',
      'test/main/**',
      'e2e/**',
      'scripts/**',
      '*.config.{js,mjs,cjs,ts,mts}',
    ],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['src-preload/**'],
    languageOptions: { globals: { ...globals.browser } },
  },

  // Browser: the React renderer and its happy-dom tests.
  {
    files: ['src-renderer/**', 'test/renderer/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['src-renderer/**/*.{ts,tsx}', 'test/renderer/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules },
  },

  // ---- layers ----
  {
    files: ['src-shared/**'],
    rules: {
      'no-restricted-imports': restrict(
        { paths: [noElectron('src-shared')] },
        {
          paths: ['react', 'react-dom', 'react-dom/client'].map((name) => ({
            name,
            message: 'src-shared must not depend on React.',
          })),
          patterns: [{ group: ['react/*', 'react-dom/*'], message: 'src-shared must not depend on React.' }],
        },
        noNode('src-shared'),
      ),
      'no-restricted-globals': ['error', ...domGlobals, ...nodeGlobals],
    },
  },
  {
    files: ['src-main/runtime/**', 'src-main/store/**'],
    rules: {
      // The typescript-eslint variant lets `import type { ... } from 'electron'` through (erased at build).
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ ...noElectron('src-main/runtime and src-main/store'), allowTypeImports: true }],
          patterns: [
            {
              group: ['electron/*'],
              message: 'src-main/runtime and src-main/store must not import electron.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src-main/**'],
    rules: { 'no-restricted-globals': ['error', ...domGlobals] },
  },
  {
    files: ['src-renderer/**'],
    rules: {
      'no-restricted-imports': restrict(
        {
          paths: [noElectron('src-renderer')],
          patterns: [{ group: ['electron/*'], message: 'src-renderer must not import electron.' }],
        },
        noNode('src-renderer'),
      ),
    },
  },
)
