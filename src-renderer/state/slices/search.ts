import type { SearchHit } from '../../../src-shared/types'
import type { Slice, SliceApi } from './api'

/** The search slice: full-text search across every session (the sidebar's search field). */

/** Message matches a search shows at first, and at most (the host answers up to 200). */
export const SEARCH_FIRST = 50
export const SEARCH_MOST = 200

export interface SearchState {
  query: string
  /** null while nothing was searched for. */
  hits: SearchHit[] | null
  loading: boolean
  /** How many message matches were asked for (the newest ones): `hits` holding that many means there may be more. */
  limit: number
}

/** The state of a search field holding `query` (nothing searched for yet). */
const idle = (query = ''): SearchState => ({ query, hits: null, loading: false, limit: SEARCH_FIRST })

export interface SearchSliceState {
  search: SearchState
}

export interface SearchActions {
  /** The search field's text (the search itself runs, debounced, through `search`). */
  setQuery(query: string): void
  search(query: string): Promise<void>
  /** The same search again, asking for SEARCH_MOST matches. */
  searchMore(): Promise<void>
  clearSearch(): void
}

export function createSearchSlice(api: SliceApi): Slice<SearchSliceState, SearchActions> {
  const { arbor, get, set } = api
  const run = async (query: string, limit: number) => {
    const q = query.trim()
    if (!q) {
      actions.clearSearch()
      return
    }
    set((s) => ({ search: { ...s.search, query, loading: true } }))
    try {
      const hits = await arbor.sessions.search(q, { limit })
      // Answers can arrive out of order while typing: keep only the one for the current text.
      if (get().search.query === query) set({ search: { query, hits, loading: false, limit } })
    } catch (err) {
      if (get().search.query === query) set({ search: { query, hits: [], loading: false, limit } })
      api.fail('Search failed', err)
    }
  }
  const actions: SearchActions = {
    search: (query) => run(query, SEARCH_FIRST),
    searchMore: () => run(get().search.query, SEARCH_MOST),

    setQuery(query) {
      set((s) => ({ search: query.trim() ? { ...s.search, query } : idle(query) }))
    },

    clearSearch() {
      set({ search: idle(), focus: null })
    },
  }
  return { state: { search: idle() }, actions }
}
