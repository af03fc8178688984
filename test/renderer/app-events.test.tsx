import { act } from 'react'
import { createRoot } from 'react-dom/client'
import { beforeAll, describe, expect, it } from 'vitest'
import { createArbor } from '../../src-shared/sdk'
import type { AppInfo } from '../../src-shared/contract'
import { IndexProgress } from '../../src-renderer/components/Search'
import { AppContext } from '../../src-renderer/state/hooks'
import { createApp } from '../../src-renderer/state/store'
import { FakeHost, settle } from './fakeHost'

const APP: AppInfo = {
  version: '0.1.0',
  host: 'browser',
  data_dir: '/tmp/x',
  store: 'sqlite',
  models: [{ id: 'scripted', label: 'Scripted offline model', offline: true }],
  default_model: 'scripted',
  search_index: { indexed_upto: 0, total: 4000, done: false },
}

beforeAll(() => {
  ;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
})

describe('host events about the data', () => {
  it('background indexing: the progress follows search_index events and disappears when done', async () => {
    const host = new FakeHost().on('app.info', () => APP).on('sessions.list', () => [])
    const app = createApp(createArbor(host), { schedule: (run) => run() })
    const el = document.createElement('div')
    document.body.append(el)
    const root = createRoot(el)
    await act(async () => {
      root.render(
        <AppContext value={app}>
          <IndexProgress />
        </AppContext>,
      )
      await app.actions.boot()
      await settle()
    })
    expect(el.querySelector('[role="status"]')?.textContent).toContain('0%')
    await act(async () => {
      host.emit({ type: 'search_index', indexed_upto: 1500, total: 4000, done: false })
      await settle()
    })
    expect(el.querySelector('[role="status"]')?.textContent).toContain(
      'Indexing older messages for search: 37%',
    )
    expect(el.querySelector('progress')?.getAttribute('value')).toBe('37')
    await act(async () => {
      host.emit({ type: 'search_index', indexed_upto: 4000, total: 4000, done: true })
      await settle()
    })
    expect(el.querySelector('[role="status"]')).toBeNull()
    act(() => root.unmount())
    el.remove()
  })

  it('a storage problem found after start is kept in the app info and shown as a notice', async () => {
    const host = new FakeHost().on('app.info', () => APP).on('sessions.list', () => [])
    const app = createApp(createArbor(host), { schedule: (run) => run() })
    await app.actions.boot()
    await settle()
    host.emit({
      type: 'storage_problem',
      message: 'The database /x/arbor.db is damaged (…). Restore a backup.',
    })
    await settle()
    expect(app.store.getState().app?.storage_problem).toContain('is damaged')
    expect(JSON.stringify(app.store.getState().notice)).toContain('The database is damaged')
  })
})
