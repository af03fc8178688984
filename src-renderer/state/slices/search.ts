import type { SearchHit } from '../../../src-shared/types'
import type { Slice, SliceApi } from './api'

/** The search slice: full-text search across every session (the sidebar's search field). */

export interface SearchState {
  query: string
  /** null while nothing was searched for. */
  hits: SearchHit[] | null
  loading: boolean
}

export interface SearchSliceState {
  search: SearchState
}

export interface SearchActions {
  /** The search field's text (the search itself runs, debounced, through `search`). */
  setQuery(query: string): void
  search(query: string): Promise<void>
  clearSearch(): void
}

export function createSearchSlice(api: SliceApi): Slice<SearchSliceState, SearchActions> {
  const { arbor, get, set } = api
  const actions: SearchActions = {
    async search(query) {
      const q = query.trim()
      if (!q) {
        actions.clearSearch()
        return
      }
      set((s) => ({ search: { ...s.search, query, loading: s.search.query === query || s.search.loading } }))
      set((s) => (s.search.query === query ? { search: { ...s.search, loading: true } } : {}))
      try {
        const hits = await arbor.sessions.search(q, { limit: 50 })
        // Answers can arrive out of order while typing: keep only the one for the current text.
        if (get().search.query === query) set({ search: { query, hits, loading: false } })
      } catch (err) {
        if (get().search.query === query) set({ search: { query, hits: [], loading: false } })
        api.fail('Search failed', err)
      }
    },

    setQuery(query) {
      set((s) => ({ search: query.trim() ? { ...s.search, query } : { query, hits: null, loading: false } }))
    },

    clearSearch() {
      set({ search: { query: '', hits: null, loading: false }, focus: null })
    },
  }
  return { state: { search: { query: '', hits: null, loading: false } }, actions }
}
