import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react'
import { api, list } from '../api/client'
import type { Session, Tree, TreeNode } from '../api/types'
import { DelegationList, OriginLink } from '../components/Delegation'
import { Button, ErrorBox, Spinner, UserName, UserText } from '../components/ui'
import { useI18n } from '../i18n'
import { formatFull } from '../lib/format'

const PAGE = 20

/**
 * TreeView shows the conversation tree around one mail (parent_mail_id
 * links, across sessions through forwards). The nodes near the mail load
 * first; scrolling to the top loads earlier ones, page by page, keeping the
 * visible rows where they were. With session, the sessions delegated from
 * it (and its origin) are listed below the mails, each a link
 * (onOpenSession).
 */
export function TreeView({ mailId, onOpen, session, onOpenSession }: {
  mailId: string
  onOpen: (n: TreeNode) => void
  session?: Session
  onOpenSession?: (id: string) => void
}) {
  const { t, locale } = useI18n()
  const [nodes, setNodes] = useState<TreeNode[]>([])
  const [meta, setMeta] = useState<Pick<Tree, 'has_before' | 'has_after' | 'before_cursor' | 'after_cursor' | 'total' | 'focus_id'> | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const scroller = useRef<HTMLDivElement>(null)
  const top = useRef<HTMLDivElement>(null)
  const keepBottom = useRef<number | null>(null)
  const centered = useRef(false)

  const first = useCallback(async () => {
    setError(null)
    try {
      const tr = await api.tree(mailId, { before: PAGE, after: PAGE })
      setNodes(list(tr.nodes))
      setMeta(tr)
    } catch (e) {
      setError(e)
    }
  }, [mailId])
  useEffect(() => {
    centered.current = false
    void first()
  }, [first])

  const more = useCallback(
    async (dir: 'before' | 'after') => {
      if (!meta || busy) return
      const cursor = dir === 'before' ? meta.before_cursor : meta.after_cursor
      if (dir === 'before' ? !meta.has_before : !meta.has_after) return
      setBusy(true)
      try {
        const tr = await api.tree(mailId, dir === 'before' ? { before: PAGE, after: 0, cursor } : { before: 0, after: PAGE, cursor })
        const got = list(tr.nodes)
        if (dir === 'before' && scroller.current) keepBottom.current = scroller.current.scrollHeight - scroller.current.scrollTop
        setNodes((cur) => {
          const seen = new Set(cur.map((n) => n.mail_id))
          const fresh = got.filter((n) => !seen.has(n.mail_id))
          return dir === 'before' ? [...fresh, ...cur] : [...cur, ...fresh]
        })
        setMeta((m) =>
          m && {
            ...m,
            total: tr.total,
            ...(dir === 'before'
              ? { has_before: tr.has_before, before_cursor: tr.before_cursor }
              : { has_after: tr.has_after, after_cursor: tr.after_cursor }),
          },
        )
      } catch (e) {
        setError(e)
      } finally {
        setBusy(false)
      }
    },
    [meta, busy, mailId],
  )

  // Keep the rows in place when earlier ones are added above them.
  useLayoutEffect(() => {
    const el = scroller.current
    if (!el) return
    if (keepBottom.current !== null) {
      el.scrollTop = el.scrollHeight - keepBottom.current
      keepBottom.current = null
    } else if (!centered.current && nodes.length > 0) {
      centered.current = true
      el.querySelector('[data-focus="true"]')?.scrollIntoView({ block: 'center' })
    }
  }, [nodes])

  // Scrolling up to the top sentinel loads earlier nodes.
  useEffect(() => {
    const el = top.current
    if (!el || !meta?.has_before || typeof IntersectionObserver === 'undefined') return
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting) && centered.current) void more('before')
      },
      { root: scroller.current, rootMargin: '40px' },
    )
    io.observe(el)
    return () => io.disconnect()
  }, [meta?.has_before, more])

  if (error && nodes.length === 0) return <ErrorBox error={error} onRetry={() => void first()} />
  if (!meta) return <Spinner />
  const focus = meta.focus_id || mailId
  return (
    <div ref={scroller} className="min-h-0 flex-1 overflow-y-auto px-3 py-3 md:px-5" data-testid="tree" aria-label={t('tree.title')}>
      <div ref={top} />
      {meta.has_before && (
        <div className="mb-2 text-center">
          <Button small disabled={busy} onClick={() => void more('before')} data-testid="tree-earlier">
            {t('tree.loadEarlier')}
          </Button>
        </div>
      )}
      <p className="mb-2 text-xs text-slate-500">{t('tree.total', { count: meta.total })}</p>
      <ol role="tree" className="flex flex-col gap-1">
        {nodes.map((n) => {
          const isFocus = n.mail_id === focus
          const failed = n.mail_type === 'failure_report'
          return (
            <li key={n.mail_id} role="treeitem" aria-level={n.depth + 1} aria-selected={isFocus} data-focus={isFocus} data-failed={failed} data-testid="tree-node" style={{ paddingLeft: `${Math.min(n.depth, 8) * 1.25}rem` }}>
              <button
                type="button"
                className={`flex w-full flex-col rounded-md border px-2 py-1.5 text-left text-sm hover:bg-slate-50 ${isFocus ? 'border-blue-400 bg-blue-50' : failed ? 'border-red-300 bg-red-50' : 'border-slate-200'}`}
                onClick={() => onOpen(n)}
              >
                <span className="flex items-baseline gap-2">
                  {failed && <span className="shrink-0 rounded bg-red-600 px-1.5 text-[10px] font-semibold text-white">{t('list.failed')}</span>}
                  <UserName className="font-medium text-slate-900" name={n.from_name} />
                  {isFocus && <span className="rounded bg-blue-600 px-1 text-[10px] text-white">{t('tree.current')}</span>}
                  <UserText className="truncate text-xs text-slate-500" text={n.subject} />
                  <span className="ml-auto shrink-0 text-xs text-slate-500">{formatFull(n.created_at, locale)}</span>
                </span>
                <span className="line-clamp-2 text-xs text-slate-600"><UserText text={n.snippet} /></span>
                {n.session_alias && <span className="font-mono text-[11px] text-slate-400">{t('tree.otherSession', { alias: n.session_alias })}</span>}
              </button>
            </li>
          )
        })}
      </ol>
      {meta.has_after && (
        <div className="mt-2 text-center">
          <Button small disabled={busy} onClick={() => void more('after')} data-testid="tree-later">
            {t('tree.loadLater')}
          </Button>
        </div>
      )}
      {session && onOpenSession && (session.origin || list(session.delegations).length > 0) && (
        <div className="mt-3 flex flex-col gap-1 border-t border-slate-200 pt-2" data-testid="tree-delegations">
          <OriginLink session={session} onOpen={onOpenSession} />
          <DelegationList session={session} onOpen={onOpenSession} />
        </div>
      )}
    </div>
  )
}
