import { shortPath } from '../lib/paths'
import { useApp } from '../state/hooks'

/** The folder an approved tool runs in: short to read, the whole path on hover and for screen readers. */
export function WorkspaceLine({ path }: { path: string }) {
  const home = useApp((s) => s.app?.home_dir)
  return (
    <p className="interaction-folder" title={path}>
      <span className="interaction-folder-label">Runs in</span>{' '}
      <code aria-label={`Folder: ${path}`}>{shortPath(path, home, 60)}</code>
    </p>
  )
}
