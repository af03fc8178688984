import { useEffect, useId, useRef, useState } from 'react'
import type { LocalDownload, LibraryModel, MemoryFit } from '../../src-shared/local-models'
import { useArbor, useHostData } from '../state/client'
import { Confirm } from './Modal'

const gb = (bytes: number) =>
  bytes >= 1e9
    ? `${(bytes / 1e9).toFixed(1)} GB`
    : `${Math.max(0.1, bytes / 1e6).toFixed(bytes >= 1e8 ? 0 : 1)} MB`

const FIT: Record<MemoryFit, string> = {
  fits: 'Fits in memory',
  tight: 'Tight: close other apps',
  too_big: 'Too big for this computer',
}

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s left`
  if (seconds < 3600) return `${Math.round(seconds / 60)} min left`
  return `${(seconds / 3600).toFixed(1)} h left`
}

/**
 * Settings → Local models: the GGUF files Arbor runs itself (no server to install). Import one
 * from disk (copied into the models folder), download one from a link or from the catalogue
 * (with progress, pause / resume and a checksum check), see whether each fits in memory, and
 * remove one to free the disk. A model here is picked like any other, in a chat's Model list.
 */
export function LocalModelSettings() {
  const arbor = useArbor()
  const { data, error, setError, act, reload } = useHostData((a) => a.call('local.models', {}))
  const [downloads, setDownloads] = useState<LocalDownload[]>([])
  const [path, setPath] = useState('')
  const [url, setUrl] = useState('')
  const [removing, setRemoving] = useState<LibraryModel | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const count = useRef(0)

  useEffect(() => {
    void arbor.call('local.downloads', {}).then(setDownloads, () => undefined)
    return arbor.onAppEvent((e) => {
      if (e.type !== 'local_downloads') return
      setDownloads(e.downloads)
      // One finished (it left the list): its file is in the folder now.
      if (e.downloads.length < count.current) void reload()
      count.current = e.downloads.length
    })
  }, [arbor, reload])
  useEffect(() => {
    count.current = downloads.length
  }, [downloads.length])

  if (!data) return <p>{error ?? 'Loading…'}</p>
  const download = (link: string) =>
    act(async () => {
      await arbor.call('local.download', { url: link.trim() })
      setUrl('')
    })
  const call = (method: 'local.pause' | 'local.resume' | 'local.cancel', download_id: string) =>
    act(() => arbor.call(method, { download_id }))
  const installed = new Set(data.models.map((m) => m.file.toLowerCase()))
  const busy = new Set(downloads.map((d) => d.name.toLowerCase()))

  return (
    <div className="local-models">
      <p className="settings-intro">
        Models that run inside Arbor, on this computer, with no server to install and no network once
        downloaded. This computer has {gb(data.memory)} of memory. Files live in <code>{data.dir}</code>.
      </p>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      {done && (
        <p className="form-ok" role="status">
          {done}
        </p>
      )}

      <h3>Your models</h3>
      {data.models.length === 0 ? (
        <p className="card-meta">None yet: import a .gguf file or download one below.</p>
      ) : (
        <ul className="local-list" aria-label="Your local models">
          {data.models.map((m) => (
            <li key={m.file} className="local-row" aria-label={m.name}>
              <div className="local-main">
                <span className="local-name">{m.name}</span>
                <span className="card-meta">
                  {[
                    gb(m.size),
                    m.quantisation,
                    m.context_length ? `${m.context_length.toLocaleString()} tokens` : null,
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </span>
                {m.problem ? (
                  <span className="form-error">{m.problem}</span>
                ) : (
                  <span className={`fit fit-${m.fit}`}>
                    {FIT[m.fit]} (needs about {gb(m.memory)})
                  </span>
                )}
              </div>
              <button type="button" className="btn btn-small" onClick={() => setRemoving(m)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}

      {downloads.length > 0 && (
        <>
          <h3>Downloading</h3>
          <ul className="local-list" aria-label="Downloads">
            {downloads.map((d) => (
              <li key={d.download_id} className="local-row" aria-label={`Download of ${d.name}`}>
                <div className="local-main">
                  <span className="local-name">{d.name}</span>
                  <progress
                    aria-label={`${d.name} downloaded`}
                    max={d.total ?? undefined}
                    value={d.total ? d.received : undefined}
                  />
                  <span className="card-meta" role="status">
                    {d.status === 'verifying'
                      ? 'Checking the file…'
                      : [
                          `${gb(d.received)}${d.total ? ` of ${gb(d.total)}` : ''}`,
                          d.status === 'downloading' && d.bytes_per_second > 0
                            ? `${gb(d.bytes_per_second)}/s`
                            : null,
                          d.status === 'downloading' && d.seconds_left !== null
                            ? duration(d.seconds_left)
                            : null,
                          d.status === 'paused' ? 'Paused' : null,
                        ]
                          .filter(Boolean)
                          .join(' · ')}
                  </span>
                  {d.error && <span className="form-error">{d.error}</span>}
                </div>
                <div className="local-actions">
                  {d.status === 'downloading' && (
                    <button
                      type="button"
                      className="btn btn-small"
                      onClick={() => void call('local.pause', d.download_id)}
                    >
                      Pause
                    </button>
                  )}
                  {(d.status === 'paused' || d.status === 'failed') && (
                    <button
                      type="button"
                      className="btn btn-small"
                      onClick={() => void call('local.resume', d.download_id)}
                    >
                      Resume
                    </button>
                  )}
                  <button
                    type="button"
                    className="btn btn-small"
                    onClick={() => void call('local.cancel', d.download_id)}
                  >
                    Cancel
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </>
      )}

      <h3>Add a model</h3>
      <OneField
        name="Import a model file"
        label="Import a .gguf file from this computer (it is copied into the models folder)"
        placeholder="/home/you/Downloads/model.gguf"
        button="Import"
        value={path}
        onChange={(v) => {
          setPath(v)
          setError(null)
        }}
        onSubmit={() =>
          void act(async () => {
            const r = await arbor.call('local.import', { path: path.trim() })
            setPath('')
            setDone(`${r.name} (${gb(r.size)}) was copied into your models.`)
          })
        }
      />
      <OneField
        name="Download a model"
        label="Download from a link (a Hugging Face “resolve” link to a .gguf file)"
        placeholder="https://huggingface.co/…/resolve/main/model-Q4_K_M.gguf"
        button="Download"
        value={url}
        onChange={(v) => {
          setUrl(v)
          setError(null)
        }}
        onSubmit={() => void download(url)}
      />

      <h3>Suggested models</h3>
      <ul className="local-list" aria-label="Suggested models">
        {data.catalogue.map((c) => {
          const file = c.url.split('/').pop()!.toLowerCase()
          return (
            <li key={c.url} className="local-row" aria-label={c.name}>
              <div className="local-main">
                <span className="local-name">{c.name}</span>
                <span className="card-meta">
                  {c.publisher} · {gb(c.size)} · {c.quantisation} · {c.context_length.toLocaleString()} tokens
                </span>
                <span className="card-meta">{c.note}</span>
                <span className={`fit fit-${c.fit}`}>
                  {FIT[c.fit]} (needs about {gb(c.memory)})
                </span>
              </div>
              <button
                type="button"
                className="btn btn-small"
                disabled={installed.has(file) || busy.has(file)}
                onClick={() => void download(c.url)}
              >
                {installed.has(file) ? 'Installed' : busy.has(file) ? 'Downloading' : 'Download'}
              </button>
            </li>
          )
        })}
      </ul>

      {removing && (
        <Confirm
          title={`Remove ${removing.name}?`}
          message={`${removing.file} (${gb(removing.size)}) is deleted from the models folder. Chats that used it keep their history; pick another model to go on in them.`}
          confirm="Remove"
          danger
          onConfirm={() =>
            void act(async () => {
              await arbor.call('local.remove', { file: removing.file })
              setRemoving(null)
            })
          }
          onCancel={() => setRemoving(null)}
        />
      )}
    </div>
  )
}

/** A form of one text field and its button (the import path, the download link). */
function OneField(props: {
  name: string
  label: string
  placeholder: string
  button: string
  value: string
  onChange: (value: string) => void
  onSubmit: () => void
}) {
  const id = useId()
  return (
    <form
      className="local-add"
      aria-label={props.name}
      onSubmit={(e) => {
        e.preventDefault()
        props.onSubmit()
      }}
    >
      <label className="field-label" htmlFor={id}>
        {props.label}
      </label>
      <div className="local-field">
        <input
          id={id}
          className="input"
          placeholder={props.placeholder}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
        />
        <button type="submit" className="btn" disabled={!props.value.trim()}>
          {props.button}
        </button>
      </div>
    </form>
  )
}
