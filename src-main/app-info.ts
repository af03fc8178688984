import { homedir } from 'node:os'
// Inlined at build time (the bundler reads package.json), so the version shown in About can
// never drift from package.json: reading the file at run time from out/main/… missed it.
import { version as packageVersion } from '../package.json'
import type { AppInfo } from '../src-shared/contract'
import type { Runtime } from './runtime'
import { DEFAULT_CONTEXT_TOKENS } from './runtime/session/model-context'

export function appInfo(runtime: Runtime, host: AppInfo['host']): () => AppInfo {
  return () => ({
    version: packageVersion,
    host,
    data_dir: runtime.dataDir,
    store: runtime.store.kind,
    models: runtime.models.map((m) => ({
      id: m.id,
      label: m.label,
      offline: m.offline,
      // The window Arbor keeps the context within: the model's own when known, else the default.
      context_window: m.context_window ?? DEFAULT_CONTEXT_TOKENS,
    })),
    default_model: runtime.defaultModel,
    search_index: runtime.searchIndex(),
    storage_problem: runtime.storageProblem(),
    home_dir: homedir(),
  })
}
