import { useRef, useState } from 'react'
import { ApiError, api, list } from '../api/client'
import type { SearchHit, SearchResults, TextSpan } from '../api/types'
import { useI18n } from '../i18n'
import { formatWhen } from '../lib/format'
import { visibleText, withoutRuleCodes } from '../lib/text'
import { useAsync } from '../lib/hooks'
import { ErrorBox, Spinner, UserName } from './ui'

/** SEARCH_PAGE is how many hits one page of results asks for. */
export const SEARCH_PAGE = 50

/**
 * SearchHelp says how to write a search: words, phrases, prefixes,
 * excluded words, the filters and the order of the results, in the
 * person's language.
 */
export function SearchHelp() {
  const { t } = useI18n()
  return (
    <details className="mt-1 text-xs text-slate-600" data-testid="search-help">
      <summary className="cursor-pointer text-blue-700 hover:underline">{t('search.help.title')}</summary>
      <ul className="mt-1 list-disc space-y-0.5 pl-4">
        <li>{t('search.help.words')}</li>
        <li>{t('search.help.phrase')}</li>
        <li>{t('search.help.exclude')}</li>
        <li>{t('search.help.filters')}</li>
        <li>{t('search.help.dates')}</li>
        <li>{t('search.help.order')}</li>
      </ul>
    </details>
  )
}

/**
 * Highlighted renders highlight spans from the search API as text, the
 * matched words in <mark>. Each span is a React text node, never HTML, so a
 * mail body holding markup shows that markup as characters.
 */
export function Highlighted({ spans }: { spans: TextSpan[] | null | undefined }) {
  return (
    <bdi>
      {list(spans).map((s, i) =>
        s.match ? (
          <mark key={i} className="rounded-sm bg-yellow-200 px-0.5 text-inherit" data-testid="search-match">
            {visibleText(s.text)}
          </mark>
        ) : (
          <span key={i}>{visibleText(s.text)}</span>
        ),
      )}
    </bdi>
  )
}

/** Later pages of one first page of results. */
interface MorePages {
  first: SearchResults | undefined
  hits: SearchHit[]
  cursor: string | undefined
}

/**
 * SearchHits shows the server's search of the person's mail for q: the
 * best matches first, each with its sender, date, highlighted subject and
 * snippet; choosing one opens its conversation at that mail. "More
 * results" appends the next page (the server's cursor of this query) until
 * no match is left.
 */
export function SearchHits({ q, onOpen }: { q: string; onOpen: (hit: SearchHit) => void }) {
  const { t, locale } = useI18n()
  const res = useAsync(() => api.search({ q, limit: SEARCH_PAGE }), [q])
  const [more, setMore] = useState<MorePages>({ first: undefined, hits: [], cursor: undefined })
  const [moreError, setMoreError] = useState<{ first: SearchResults; error: unknown } | undefined>(undefined)
  const [loadingMore, setLoadingMore] = useState(false)
  const current = useRef<SearchResults | undefined>(undefined)
  current.current = res.data
  if (res.error && !res.data) {
    // A query the server cannot read is the person's to change, not a
    // failure to retry: say what is wrong with it and how to write it.
    if (res.error instanceof ApiError && res.error.status === 400 && res.error.field === 'q') {
      const fix = res.error.suggestion ? withoutRuleCodes(res.error.suggestion) : ''
      return (
        <div role="alert" className="m-3 rounded-md border border-amber-200 bg-amber-50 p-3 text-sm text-amber-900" data-testid="search-bad-query">
          <p>{t('search.badQuery', { reason: withoutRuleCodes(res.error.message) })}</p>
          {fix && <p className="mt-1">{t('search.badQueryFix', { fix })}</p>}
        </div>
      )
    }
    return <ErrorBox error={res.error} onRetry={res.reload} />
  }
  if (!res.data) return <Spinner />
  const first = res.data
  // Pages fetched for an earlier query or an earlier first page are dropped.
  const pages = more.first === first ? more : { first, hits: [], cursor: first.next_cursor }
  const hits = [...list(first.hits), ...pages.hits]
  const loadMore = () => {
    if (!pages.cursor || loadingMore) return
    setLoadingMore(true)
    setMoreError(undefined)
    api.search({ q, limit: SEARCH_PAGE, cursor: pages.cursor }).then(
      (r) => {
        setLoadingMore(false)
        if (current.current !== first) return
        setMore({ first, hits: [...pages.hits, ...list(r.hits)], cursor: r.next_cursor })
      },
      (e) => {
        setLoadingMore(false)
        if (current.current === first) setMoreError({ first, error: e })
      },
    )
  }
  if (hits.length === 0) return <p className="p-6 text-center text-sm text-slate-500" data-testid="search-empty">{t('search.empty')}</p>
  return (
    <>
    <ul className="divide-y divide-slate-100" data-testid="search-hits" aria-label={t('search.results')}>
      {hits.map((h) => (
        <li key={h.mail.mail_id}>
          <button type="button" className="block w-full px-3 py-2 text-left hover:bg-slate-50 focus:bg-blue-50 focus:outline-none" onClick={() => onOpen(h)} data-testid="search-hit" data-mail={h.mail.mail_id}>
            <div className="flex items-baseline gap-2 text-xs text-slate-500">
              <UserName className="truncate font-medium text-slate-700" name={h.mail.from_name} />
              <span className="truncate">{h.mail.session_alias}</span>
              <span className="ml-auto shrink-0">{formatWhen(h.mail.created_at, locale)}</span>
            </div>
            <div className="truncate text-sm text-slate-900">
              <Highlighted spans={h.subject} />
            </div>
            <div className="line-clamp-2 text-xs text-slate-600">
              <Highlighted spans={h.snippet} />
            </div>
          </button>
        </li>
      ))}
    </ul>
    {moreError?.first === first ? <ErrorBox error={moreError.error} onRetry={loadMore} /> : null}
    {pages.cursor && (
      <div className="p-3 text-center">
        <button type="button" className="rounded border border-slate-300 px-3 py-1 text-sm text-blue-700 hover:bg-slate-50 disabled:text-slate-400" onClick={loadMore} disabled={loadingMore} data-testid="search-more">
          {loadingMore ? t('app.loading') : t('search.more')}
        </button>
      </div>
    )}
    </>
  )
}
