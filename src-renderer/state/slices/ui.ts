import type { AppInfo, AppSettings, ProviderPreset } from '../../../src-shared/contract'
import type { Slice, SliceApi } from './api'

/** The ui slice: app info and settings, the connection, notices, the side panel and dialogs. */

export interface Notice {
  id: number
  text: string
  /** One thing to do about it, as a button in the toast ("Undo"). */
  action?: { label: string; run: () => void }
}

export interface UiState {
  app: AppInfo | null
  /** False while the transport is down (browser host only). */
  connected: boolean
  notice: Notice | null
  /** App-wide settings (default model and approval mode, theme); null until loaded. */
  settings: AppSettings | null
  /** The side panel next to the transcript. */
  panel: 'history' | null
  /** A modal over the whole window. */
  dialog: 'settings' | 'shortcuts' | null
  /** The Settings tab it opens on. */
  settingsTab: SettingsTab
  /** Whether the chat list shows (collapsed at first in a narrow window). */
  sidebar: boolean
  /** A provider to prefill Settings → Providers' add form with (a Connect button); taken once. */
  providerDraft: ProviderDraft | null
}

/** A preset or a server found on this computer (with the models it offers). */
export interface ProviderDraft extends ProviderPreset {
  models: string[]
}

/** Narrower than this, the chat list starts collapsed. */
const NARROW_PX = 800

export type SettingsTab = 'general' | 'providers' | 'local' | 'mcp' | 'permissions' | 'data'

export interface UiActions {
  dismissNotice(): void
  notify(text: string, action?: Notice['action']): void
  loadSettings(): Promise<void>
  saveSettings(patch: Partial<AppSettings>): Promise<void>
  /** Re-reads app.info (the model list changes when providers change). */
  refreshAppInfo(): Promise<void>
  setPanel(panel: UiState['panel']): void
  setDialog(dialog: UiState['dialog']): void
  /** Opens Settings on one tab (a fix-it link). */
  openSettings(tab: SettingsTab): void
  setSidebar(open: boolean): void
  /** Opens Settings → Providers with the add form filled in for this preset or found server. */
  connectProvider(draft: ProviderDraft): void
  /** The providers tab took the draft (it is used once). */
  takeProviderDraft(): void
}

export function createUiSlice(api: SliceApi): Slice<UiState, UiActions> {
  const { arbor, set } = api
  let noticeId = 0
  return {
    state: {
      app: null,
      connected: true,
      notice: null,
      settings: null,
      panel: null,
      dialog: null,
      settingsTab: 'general',
      sidebar: typeof window === 'undefined' || window.innerWidth >= NARROW_PX,
      providerDraft: null,
    },
    actions: {
      dismissNotice() {
        set({ notice: null })
      },

      notify(text, action) {
        set({ notice: { id: ++noticeId, text, ...(action ? { action } : {}) } })
      },

      async loadSettings() {
        try {
          set({ settings: await arbor.call('settings.get', {}) })
        } catch {
          // Older hosts without settings: the defaults apply.
        }
      },

      async saveSettings(patch) {
        try {
          set({ settings: await arbor.call('settings.set', patch) })
        } catch (err) {
          api.fail('Could not save the settings', err)
        }
      },

      async refreshAppInfo() {
        try {
          set({ app: await arbor.call('app.info', {}) })
        } catch {
          // keep the old list
        }
      },

      setPanel(panel) {
        set({ panel })
      },

      setDialog(dialog) {
        set(dialog === 'settings' ? { dialog, settingsTab: 'general' } : { dialog })
      },

      openSettings(settingsTab) {
        set({ dialog: 'settings', settingsTab })
      },

      setSidebar(sidebar) {
        set({ sidebar })
      },

      connectProvider(providerDraft) {
        set({ dialog: 'settings', settingsTab: 'providers', providerDraft })
      },

      takeProviderDraft() {
        set({ providerDraft: null })
      },
    },
  }
}
