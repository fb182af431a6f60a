import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { api, list } from '../api/client'
import type { Mail, Session } from '../api/types'
import { BudgetBadge } from '../components/Budget'
import { Count, ErrorBox, Icon, IconButton, Spinner, UserText, inputClass } from '../components/ui'
import { visibleText } from '../lib/text'
import { useI18n } from '../i18n'
import { formatWhen } from '../lib/format'
import { reveal, useAsync, useIsNarrow, useNextFrame } from '../lib/hooks'
import { load, save } from '../lib/storage'
import { navigate } from '../router'
import { errorText, useApp, useLive } from '../state'
import { Conversation, type ConversationActions } from './Conversation'
import { ImportanceBadge, ImportanceFilter, ImportantRow, importantBySession, type ShowFilter } from '../components/Coordination'
import { SearchHelp, SearchHits } from '../components/Search'

/** ListView is the middle pane's mode: who am I talking to, or what is it about. */
export type ListView = 'list' | 'cards'
const VIEWS: readonly ListView[] = ['list', 'cards']

/** Item is one row of the middle pane, for either folder. */
interface Item {
  key: string
  sessionId: string
  mailId?: string
  session?: Session
  mail?: Mail
  text: string // for the filter
  importance?: Mail['importance'] // of the most important unread mail of the session (Coordination.tsx)
}

function counterpart(s: Session, me: string): string {
  const others = list(s.participants).filter((p) => p !== me)
  if (s.agent_name && !others.includes(s.agent_name)) others.unshift(s.agent_name)
  return others.join(', ') || me
}

function sessionAddress(s: Session): string {
  if (!s.agent_name) return s.alias
  return `${s.agent_name}@${s.workspace}${s.alias ? '.' + s.alias : ''}`
}

/**
 * Mailbox is the list pane (list or card view, kept in localStorage) and the
 * conversation pane: side by side on wide screens; below 768 px the list fills
 * the screen and the conversation slides in over it, the list staying mounted.
 */
export function Mailbox({ folder, openId, focusMail, treeMail }: { folder: 'inbox' | 'sent'; openId?: string; focusMail?: string; treeMail?: string }) {
  const { t, locale } = useI18n()
  const { me, setKeyHandlers, notify, refreshCounts } = useApp()
  const narrow = useIsNarrow()
  const [view, setView] = useState<ListView>(() => load('listView', VIEWS, 'list'))
  const [filter, setFilter] = useState('')
  // searchQ is the server-side search shown instead of the list (Enter or
  // the search button in the box); editing the box goes back to filtering.
  const [searchQ, setSearchQ] = useState('')
  const [show, setShow] = useState<ShowFilter>('all')
  const [selected, setSelected] = useState<string | undefined>(openId)
  const filterRef = useRef<HTMLInputElement>(null)
  const listRef = useRef<HTMLUListElement>(null)
  const conv = useRef<ConversationActions | null>(null)
  const [shownId, setShownId] = useState(openId)

  useEffect(() => {
    if (openId) {
      setShownId(openId)
      setSelected(openId)
    }
  }, [openId])

  const data = useAsync<Item[]>(async () => {
    if (folder === 'inbox' && show !== 'all') {
      const r = await api.inbox({ status: 'all', importance: show === 'urgent' ? 'urgent' : 'high,urgent', sort: 'importance', limit: 100 })
      return list(r.mails).map((m) => ({
        key: m.mail_id,
        sessionId: m.session_id,
        mailId: m.mail_id,
        mail: m,
        text: [m.subject, m.from_name, m.session_alias, m.body.slice(0, 200)].join(' ').toLowerCase(),
      }))
    }
    if (folder === 'inbox') {
      const [r, important] = await Promise.all([api.sessions({ limit: 200 }), importantBySession()])
      return list(r.sessions).map((s) => ({
        key: s.session_id,
        sessionId: s.session_id,
        session: s,
        importance: important.get(s.session_id),
        text: [s.subject, s.alias, s.agent_name, s.workspace, s.last_from, s.last_snippet, ...list(s.participants)].join(' ').toLowerCase(),
      }))
    }
    const r = await api.sent({ limit: 100 })
    return list(r.mails).map((m) => ({
      key: m.mail_id,
      sessionId: m.session_id,
      mailId: m.mail_id,
      mail: m,
      text: [m.subject, m.session_alias, m.body.slice(0, 200), ...list(m.recipients).map((x) => x.address)].join(' ').toLowerCase(),
    }))
  }, [folder, show])
  const reload = data.reload
  useLive(() => reload())

  const items = useMemo(() => {
    const all = data.data ?? []
    const f = filter.trim().toLowerCase()
    return f ? all.filter((i) => i.text.includes(f)) : all
  }, [data.data, filter])

  const setViewSaved = (v: ListView) => {
    setView(v)
    save('listView', v)
  }

  const base = folder === 'inbox' ? '/inbox' : '/sent'
  const open = useCallback(
    (it: Item) => {
      setSelected(it.key)
      const q = it.mailId ? `?m=${encodeURIComponent(it.mailId)}` : ''
      navigate(`${base}/${encodeURIComponent(it.sessionId)}${q}`)
    },
    [base],
  )
  const back = useCallback(() => navigate(base), [base])

  const nextFrame = useNextFrame()
  const selIndex = items.findIndex((i) => i.key === selected || (!!openId && i.sessionId === openId && !selected))
  const move = useCallback(
    (d: 1 | -1) => {
      if (items.length === 0) return
      const next = Math.min(items.length - 1, Math.max(0, selIndex < 0 ? 0 : selIndex + d))
      const it = items[next]
      setSelected(it.key)
      if (openId) open(it)
      nextFrame(() => reveal(listRef.current?.querySelector(`[data-key="${CSS.escape(it.key)}"]`), { block: 'nearest' }))
    },
    [items, selIndex, openId, open, nextFrame],
  )

  const markSession = useCallback(
    async (sessionId: string, unread: boolean) => {
      try {
        const r = await api.sessionMails(sessionId, { limit: 200 })
        const received = list(r.mails).filter((m) => m.role)
        const ids = unread ? received.slice(-1).map((m) => m.mail_id) : received.filter((m) => !m.read).map((m) => m.mail_id)
        if (ids.length) await api.markRead(ids, unread)
        notify(t(unread ? 'toast.markedUnread' : 'toast.markedRead'))
        refreshCounts()
        reload()
      } catch (e) {
        notify(errorText(e), 'error')
      }
    },
    [notify, refreshCounts, reload, t],
  )

  useEffect(
    () =>
      setKeyHandlers({
        next: () => move(1),
        prev: () => move(-1),
        open: () => {
          const it = items[selIndex < 0 ? 0 : selIndex]
          if (it) open(it)
        },
        back: () => openId && back(),
        escape: () => openId && narrow && back(),
        search: () => filterRef.current?.focus(),
        reply: () => conv.current?.reply(),
        replyAll: () => conv.current?.replyAll(),
        forward: () => conv.current?.forward(),
        approve: () => conv.current?.decide('approve'),
        deny: () => conv.current?.decide('deny'),
        markRead: () => {
          const id = openId ?? items[selIndex]?.sessionId
          if (id) void markSession(id, false)
        },
        markUnread: () => {
          const id = openId ?? items[selIndex]?.sessionId
          if (id) {
            void markSession(id, true)
            if (openId) back()
          }
        },
      }),
    [setKeyHandlers, move, items, selIndex, open, openId, back, narrow, markSession],
  )

  const title = folder === 'inbox' ? t('list.title.inbox') : t('list.title.sent')
  const listPane = (
    <section className="flex h-full min-h-0 flex-col bg-white" aria-label={title}>
      <div className="flex items-center gap-2 border-b border-slate-200 px-3 py-2">
        <h1 className="text-base font-semibold text-slate-900">{title}</h1>
        <div className="ml-auto flex items-center rounded-md border border-slate-200" role="group" aria-label={t('list.view')}>
          <IconButton label={t('list.viewList')} aria-pressed={view === 'list'} data-testid="view-list" className={`h-8 w-8 ${view === 'list' ? 'bg-slate-100 text-blue-700' : ''}`} onClick={() => setViewSaved('list')}>
            <Icon name="list" className="h-4 w-4" />
          </IconButton>
          <IconButton label={t('list.viewCards')} aria-pressed={view === 'cards'} data-testid="view-cards" className={`h-8 w-8 ${view === 'cards' ? 'bg-slate-100 text-blue-700' : ''}`} onClick={() => setViewSaved('cards')}>
            <Icon name="cards" className="h-4 w-4" />
          </IconButton>
        </div>
      </div>
      <div className="border-b border-slate-100 px-3 py-2">
        <label htmlFor="list-filter" className="sr-only">
          {t('list.filter')}
        </label>
        <input
          id="list-filter"
          ref={filterRef}
          type="search"
          className={inputClass}
          placeholder={t('list.filterPlaceholder')}
          value={filter}
          onChange={(e) => {
            setFilter(e.target.value)
            setSearchQ('')
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape' || e.key === 'Enter') {
              e.currentTarget.blur()
              if (e.key === 'Enter' && filter.trim()) setSearchQ(filter.trim())
              if (e.key === 'Escape' && searchQ) setSearchQ('')
            }
          }}
          data-testid="list-filter"
        />
        {filter.trim() && !searchQ && (
          <button type="button" className="mt-1 text-xs text-blue-700 hover:underline" onClick={() => setSearchQ(filter.trim())} data-testid="search-all">
            {t('search.all')}
          </button>
        )}
        {searchQ && (
          <div className="mt-1 flex items-center gap-2 text-xs text-slate-600">
            <span>{t('search.showing')}</span>
            <button type="button" className="text-blue-700 hover:underline" onClick={() => setSearchQ('')} data-testid="search-close">
              {t('search.back')}
            </button>
          </div>
        )}
        {filter.trim() && <SearchHelp />}
        {folder === 'inbox' && <ImportanceFilter show={show} setShow={setShow} />}
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto" data-testid="list-scroll">
        {searchQ ? (
          <SearchHits q={searchQ} onOpen={(h) => navigate(`/inbox/${encodeURIComponent(h.mail.session_id)}?m=${encodeURIComponent(h.mail.mail_id)}`)} />
        ) : data.error && !data.data ? (
          <ErrorBox error={data.error} onRetry={reload} />
        ) : !data.data ? (
          <Spinner />
        ) : items.length === 0 ? (
          <p className="p-6 text-center text-sm text-slate-500">{filter ? t('list.emptyFilter') : folder === 'sent' ? t('list.emptySent') : show !== 'all' ? t('list.importantEmpty') : t('list.empty')}</p>
        ) : (
          <ul ref={listRef} className={view === 'cards' ? 'flex flex-col gap-2 p-2' : 'divide-y divide-slate-100'} data-testid="mail-list" data-view={view}>
            {items.map((it) => (
              <li key={it.key} data-key={it.key}>
                {it.session ? (
                  view === 'cards' ? (
                    <SessionCard s={it.session} me={me.username} selected={it.key === selected} current={it.sessionId === openId} onOpen={() => open(it)} locale={locale} importance={it.importance} />
                  ) : (
                    <SessionRow s={it.session} me={me.username} selected={it.key === selected} current={it.sessionId === openId} onOpen={() => open(it)} locale={locale} importance={it.importance} />
                  )
                ) : it.mail && folder === 'inbox' ? (
                  <ImportantRow m={it.mail} className={rowClass(it.key === selected, it.sessionId === openId)} onOpen={() => open(it)} locale={locale} />
                ) : it.mail ? (
                  <SentRow m={it.mail} cards={view === 'cards'} selected={it.key === selected} onOpen={() => open(it)} locale={locale} />
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  )

  const convPane = (id: string | undefined) =>
    id ? (
      <Conversation
        key={id}
        sessionId={id}
        focusMail={focusMail}
        treeMail={treeMail}
        basePath={base}
        onBack={back}
        actions={conv}
        onChanged={reload}
      />
    ) : (
      <div className="flex h-full items-center justify-center p-6 text-sm text-slate-500">{t('conv.none')}</div>
    )

  if (narrow) {
    const isOpen = !!openId
    return (
      <div className="relative h-full min-h-0 overflow-hidden">
        <div className="absolute inset-0" inert={isOpen}>
          {listPane}
        </div>
        <div
          className={`absolute inset-0 z-10 bg-white shadow-xl transition-transform duration-200 ease-out motion-reduce:transition-none ${isOpen ? 'translate-x-0' : 'translate-x-full'}`}
          inert={!isOpen}
          aria-hidden={!isOpen}
          data-testid="conversation-panel"
          data-open={isOpen}
          onTransitionEnd={() => {
            if (!isOpen) setShownId(undefined)
          }}
        >
          {convPane(isOpen ? openId : shownId)}
        </div>
      </div>
    )
  }
  return (
    <div className="flex h-full min-h-0">
      <div className="w-[22rem] shrink-0 border-r border-slate-200 lg:w-[26rem]">{listPane}</div>
      <div className="min-w-0 flex-1" data-testid="conversation-panel" data-open={!!openId}>
        {convPane(openId)}
      </div>
    </div>
  )
}

function rowClass(selected: boolean, current: boolean): string {
  return `w-full text-left focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600 ${
    current ? 'bg-blue-50' : selected ? 'bg-slate-100' : 'hover:bg-slate-50'
  } ${selected ? 'border-l-4 border-blue-600' : 'border-l-4 border-transparent'}`
}

/**
 * sessionFailed tells whether a conversation's latest news is a failure:
 * its last mail is a failure report (a working-directory failure starts no
 * run) or its latest run failed.
 */
function sessionFailed(s: Pick<Session, 'last_mail_type' | 'run_state'>): boolean {
  return s.last_mail_type === 'failure_report' || s.run_state === 'failed'
}

/** FailedBadge marks a failed conversation in words, not only a coloured dot. */
function FailedBadge() {
  const { t } = useI18n()
  return (
    <span className="shrink-0 rounded bg-red-600 px-1.5 text-[11px] font-semibold text-white" data-testid="row-failed">
      {t('list.failed')}
    </span>
  )
}

/**
 * RunningBadge marks in words a conversation whose agent works now: any run
 * of it is running (running_turns), not only the latest one (issue 16).
 */
function RunningBadge({ n }: { n: number }) {
  const { t } = useI18n()
  return (
    <span className="inline-flex shrink-0 items-center gap-1 rounded bg-blue-100 px-1.5 text-[11px] font-medium leading-4 text-blue-900" data-testid="row-running" title={t('list.runningTitle', { count: n })}>
      <span className="inline-block h-1.5 w-1.5 rounded-full bg-blue-600 animate-pulse motion-reduce:animate-none" aria-hidden="true" />
      {t('list.running')}
    </span>
  )
}

function RunDot({ state }: { state?: string }) {
  const { t } = useI18n()
  if (!state) return null
  const c = state === 'running' ? 'bg-blue-500 animate-pulse motion-reduce:animate-none' : state === 'failed' ? 'bg-red-500' : state === 'idle' ? 'bg-slate-400' : 'bg-emerald-500'
  const label = t(`run.${state as 'running'}`)
  return <span className={`inline-block h-2 w-2 rounded-full ${c}`} title={label} aria-label={label} />
}

/**
 * SessionRow: list view — who am I talking to. The name leads (with the
 * address after it), then the subject and the start of the last mail, as a
 * mail client's list shows sender, subject and snippet.
 */
export function SessionRow({ s, me, selected, current, onOpen, locale, importance }: { s: Session; me: string; selected: boolean; current: boolean; onOpen: () => void; locale: string; importance?: Mail['importance'] }) {
  const { t } = useI18n()
  const unread = s.unread > 0
  const who = counterpart(s, me)
  const failed = sessionFailed(s)
  return (
    <button type="button" className={`${rowClass(selected, current)} flex items-center gap-3 px-3 py-2.5`} onClick={onOpen} data-testid="session-row" data-session-id={s.session_id} data-unread={unread} data-failed={failed} aria-current={current ? 'true' : undefined}>
      <span className="flex h-9 w-9 shrink-0 items-center justify-center rounded-full bg-slate-200 text-sm font-semibold uppercase text-slate-700" aria-hidden="true">
        {visibleText(who).slice(0, 1)}
      </span>
      <span className="flex min-w-0 flex-1 flex-col">
        <span className="flex items-baseline gap-2">
          <span className={`shrink-0 truncate text-sm ${unread ? 'font-bold text-slate-900' : 'text-slate-800'}`} data-testid="row-who">
            <UserText text={who} />
          </span>
          <span className="min-w-0 truncate font-mono text-[11px] text-slate-500" data-testid="row-address">
            {sessionAddress(s)}
          </span>
          {(s.running_turns ?? 0) > 0 && <RunningBadge n={s.running_turns ?? 0} />}
          {failed ? <FailedBadge /> : (s.running_turns ?? 0) === 0 && <RunDot state={s.run_state} />}
          <ImportanceBadge importance={importance} />
          <span className="ml-auto shrink-0 text-xs text-slate-500">{formatWhen(s.last_activity, locale)}</span>
        </span>
        <span className="flex items-center gap-2">
          <span className="min-w-0 flex-1 truncate text-xs" data-testid="row-subject">
            <span className={unread ? 'font-semibold text-slate-900' : 'text-slate-700'}>{s.subject ? <UserText text={s.subject} /> : t('list.noSubject')}</span>
            {s.last_snippet && <span className="text-slate-500"> — <UserText text={s.last_snippet} /></span>}
          </span>
          {s.pending_permissions > 0 && <Count n={s.pending_permissions} tone="amber" label={t('list.waiting', { count: s.pending_permissions })} />}
          {unread && <Count n={s.unread} label={t('list.unread', { count: s.unread })} />}
        </span>
      </span>
    </button>
  )
}

/** SessionCard: card view — what is it about and how far along. */
export function SessionCard({ s, me, selected, current, onOpen, locale, importance }: { s: Session; me: string; selected: boolean; current: boolean; onOpen: () => void; locale: string; importance?: Mail['importance'] }) {
  const { t } = useI18n()
  const unread = s.unread > 0
  const failed = sessionFailed(s)
  return (
    <button type="button" className={`${rowClass(selected, current)} flex flex-col gap-1 rounded-md border ${failed ? 'border-red-300' : 'border-slate-200'} p-3 shadow-sm`} onClick={onOpen} data-testid="session-card" data-session-id={s.session_id} data-unread={unread} data-failed={failed} aria-current={current ? 'true' : undefined}>
      <span className="flex items-center gap-2">
        {failed && <FailedBadge />}
        <ImportanceBadge importance={importance} />
        <span className={`truncate text-sm ${unread ? 'font-bold text-slate-900' : 'font-medium text-slate-800'}`}>{s.subject ? <UserText text={s.subject} /> : t('list.noSubject')}</span>
        <span className="ml-auto shrink-0 text-xs text-slate-500">{formatWhen(s.last_activity, locale)}</span>
      </span>
      <span className="line-clamp-2 text-xs text-slate-600">
        {s.last_from && <span className="font-medium text-slate-700">{s.last_from === me ? t('list.you') : <UserText text={s.last_from} />}: </span>}
        <UserText text={s.last_snippet} />
      </span>
      <span className="flex flex-wrap items-center gap-2 pt-1">
        <span className="truncate font-mono text-[11px] text-slate-500">{sessionAddress(s)}</span>
        {(s.running_turns ?? 0) > 0 ? <RunningBadge n={s.running_turns ?? 0} /> : !failed && <RunDot state={s.run_state} />}
        <span className="ml-auto flex items-center gap-1.5">
          <BudgetBadge max={s.budget_max} used={s.used_rounds} />
          {s.pending_permissions > 0 && <Count n={s.pending_permissions} tone="amber" label={t('list.waiting', { count: s.pending_permissions })} />}
          {unread && <Count n={s.unread} label={t('list.unread', { count: s.unread })} />}
        </span>
      </span>
    </button>
  )
}

function SentRow({ m, cards, selected, onOpen, locale }: { m: Mail; cards: boolean; selected: boolean; onOpen: () => void; locale: string }) {
  const { t } = useI18n()
  const to = list(m.recipients)
    .filter((r) => r.role === 'to')
    .map((r) => r.address)
    .join(', ')
  return (
    <button type="button" className={`${rowClass(selected, false)} flex flex-col gap-0.5 px-3 py-2.5 ${cards ? 'rounded-md border border-slate-200' : ''}`} onClick={onOpen} data-testid="sent-row">
      <span className="flex items-center gap-2">
        <span className="truncate text-sm text-slate-800">{t('list.to', { to })}</span>
        <span className="ml-auto shrink-0 text-xs text-slate-500">{formatWhen(m.created_at, locale)}</span>
      </span>
      <span className="truncate text-sm font-medium text-slate-900">{m.subject ? <UserText text={m.subject} /> : t('list.noSubject')}</span>
      {cards && <span className="line-clamp-2 text-xs text-slate-600"><UserText text={m.body.slice(0, 200)} /></span>}
    </button>
  )
}
