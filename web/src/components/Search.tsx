import { ApiError, api, list } from '../api/client'
import type { SearchHit, TextSpan } from '../api/types'
import { useI18n } from '../i18n'
import { formatWhen } from '../lib/format'
import { withoutRuleCodes } from '../lib/text'
import { useAsync } from '../lib/hooks'
import { ErrorBox, Spinner } from './ui'

/**
 * Highlighted renders highlight spans from the search API as text, the
 * matched words in <mark>. Each span is a React text node, never HTML, so a
 * mail body holding markup shows that markup as characters.
 */
export function Highlighted({ spans }: { spans: TextSpan[] | null | undefined }) {
  return (
    <>
      {list(spans).map((s, i) =>
        s.match ? (
          <mark key={i} className="rounded-sm bg-yellow-200 px-0.5 text-inherit" data-testid="search-match">
            {s.text}
          </mark>
        ) : (
          <span key={i}>{s.text}</span>
        ),
      )}
    </>
  )
}

/**
 * SearchHits shows the server's search of the person's mail for q: the
 * best matches first, each with its sender, date, highlighted subject and
 * snippet; choosing one opens its conversation at that mail.
 */
export function SearchHits({ q, onOpen }: { q: string; onOpen: (hit: SearchHit) => void }) {
  const { t, locale } = useI18n()
  const res = useAsync(() => api.search({ q, limit: 50 }), [q])
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
  const hits = list(res.data.hits)
  if (hits.length === 0) return <p className="p-6 text-center text-sm text-slate-500" data-testid="search-empty">{t('search.empty')}</p>
  return (
    <ul className="divide-y divide-slate-100" data-testid="search-hits" aria-label={t('search.results')}>
      {hits.map((h) => (
        <li key={h.mail.mail_id}>
          <button type="button" className="block w-full px-3 py-2 text-left hover:bg-slate-50 focus:bg-blue-50 focus:outline-none" onClick={() => onOpen(h)} data-testid="search-hit" data-mail={h.mail.mail_id}>
            <div className="flex items-baseline gap-2 text-xs text-slate-500">
              <span className="truncate font-medium text-slate-700">{h.mail.from_name}</span>
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
  )
}
