import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { AppInfo } from '../src-shared/contract'
import type { Runtime } from './runtime'
import { DEFAULT_CONTEXT_TOKENS } from './runtime/session/model-context'

function version(): string {
  try {
    return (JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string })
      .version
  } catch {
    return '0.0.0'
  }
}

export function appInfo(runtime: Runtime, host: AppInfo['host']): () => AppInfo {
  const v = version()
  return () => ({
    version: v,
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
