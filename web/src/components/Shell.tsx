import { useEffect, useState, type ReactNode } from 'react'
import { LANGS, useI18n } from '../i18n'
import { SHORTCUTS, actionForKey, isEditableTarget } from '../lib/shortcuts'
import { useIsNarrow } from '../lib/hooks'
import { linkHandler } from '../router'
import { useApp } from '../state'
import { ComposeDialog } from './Compose'
import { Button, Count, Icon, IconButton, Modal } from './ui'

/** LangSwitch toggles English / 中文; the choice is stored. */
export function LangSwitch() {
  const { lang, setLang, t } = useI18n()
  return (
    <div className="flex overflow-hidden rounded-md border border-slate-300 text-xs" role="group" aria-label={t('lang.label')}>
      {LANGS.map((l) => (
        <button
          key={l}
          type="button"
          lang={l === 'zh' ? 'zh-CN' : 'en'}
          aria-pressed={lang === l}
          className={`px-2 py-1 ${lang === l ? 'bg-slate-800 text-white' : 'bg-white text-slate-700 hover:bg-slate-100'}`}
          onClick={() => setLang(l)}
          data-testid={`lang-${l}`}
        >
          {t(`lang.${l}`)}
        </button>
      ))}
    </div>
  )
}

interface NavItem {
  to: string
  icon: string
  label: string
  count?: number
  countTone?: 'blue' | 'amber'
  countLabel?: string
  match: (path: string) => boolean
}

function useNavItems(): NavItem[] {
  const { t } = useI18n()
  const { me, counts } = useApp()
  const items: NavItem[] = [
    { to: '/inbox', icon: 'inbox', label: t('nav.inbox'), count: counts.unread, countLabel: t('nav.unreadCount', { count: counts.unread }), match: (p) => p === '/' || p.startsWith('/inbox') },
    { to: '/waiting', icon: 'waiting', label: t('nav.waiting'), count: counts.pending_permissions, countTone: 'amber', countLabel: t('nav.waitingCount', { count: counts.pending_permissions }), match: (p) => p.startsWith('/waiting') },
    { to: '/sent', icon: 'sent', label: t('nav.sent'), match: (p) => p.startsWith('/sent') },
    { to: '/agents', icon: 'agents', label: t('nav.agents'), match: (p) => p.startsWith('/agents') },
    { to: '/account', icon: 'account', label: t('nav.account'), match: (p) => p.startsWith('/account') },
    // Below the bottom bar's four (items 0-1 and 3-4): in the drawer only on narrow screens.
    { to: '/acks', icon: 'acks', label: t('nav.acks'), match: (p) => p.startsWith('/acks') },
    { to: '/reservations', icon: 'reservations', label: t('nav.reservations'), match: (p) => p.startsWith('/reservations') },
  ]
  if (me.role === 'admin') items.push({ to: '/admin/users', icon: 'admin', label: t('nav.admin'), match: (p) => p.startsWith('/admin') })
  return items
}

function NavLinks({ path, onNavigate }: { path: string; onNavigate?: () => void }) {
  const items = useNavItems()
  return (
    <ul className="flex flex-col gap-0.5">
      {items.map((it) => {
        const active = it.match(path)
        return (
          <li key={it.to}>
            <a
              href={it.to}
              onClick={(e) => {
                linkHandler(it.to)(e)
                onNavigate?.()
              }}
              aria-current={active ? 'page' : undefined}
              data-testid={`nav-${it.icon}`}
              className={`flex items-center gap-3 rounded-md px-3 py-2 text-sm ${active ? 'bg-blue-50 font-semibold text-blue-800' : 'text-slate-700 hover:bg-slate-100'}`}
            >
              <Icon name={it.icon} />
              <span>{it.label}</span>
              {!!it.count && <Count n={it.count} tone={it.countTone} label={it.countLabel ?? ''} />}
            </a>
          </li>
        )
      })}
    </ul>
  )
}

/** Shell lays out the page: navigation (a drawer plus a bottom bar below 768 px), the live banner, the compose dialog, help, toasts and the keyboard shortcuts. */
export function Shell({ path, children }: { path: string; children: ReactNode }) {
  const { t } = useI18n()
  const app = useApp()
  const narrow = useIsNarrow()
  const [drawer, setDrawer] = useState(false)

  useEffect(() => {
    if (!narrow) setDrawer(false)
  }, [narrow])
  useEffect(() => setDrawer(false), [path])

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing) return
      const target = e.target as HTMLElement | null
      // Enter on a focused button or link activates it; it is not "open".
      if (e.key === 'Enter' && target && target.closest('button, a, summary, [role="option"], [role="tab"]')) return
      const action = actionForKey({
        key: e.key,
        shiftKey: e.shiftKey,
        ctrlKey: e.ctrlKey,
        metaKey: e.metaKey,
        altKey: e.altKey,
        inEditable: isEditableTarget(e.target),
      })
      if (!action) return
      // While a dialog is open, only Escape is handled (by the dialog itself).
      if (app.compose || app.helpOpen || document.querySelector('[role="dialog"]')) return
      if (action === 'help') {
        e.preventDefault()
        app.setHelpOpen(true)
        return
      }
      if (action === 'compose') {
        e.preventDefault()
        app.openCompose({ mode: 'new' })
        return
      }
      if (action === 'escape' && drawer) {
        setDrawer(false)
        return
      }
      const h = app.keyHandlers.current[action]
      if (h) {
        e.preventDefault()
        h()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [app, drawer])

  const items = useNavItems()

  return (
    <div className="flex h-dvh flex-col bg-slate-50 text-slate-900">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:z-50 focus:bg-white focus:p-2">
        {t('app.skipToContent')}
      </a>
      <header className="flex h-12 shrink-0 items-center gap-2 border-b border-slate-200 bg-white px-2 md:px-4">
        {narrow && (
          <IconButton label={t('nav.menu')} onClick={() => setDrawer(true)} aria-expanded={drawer} data-testid="drawer-open">
            <Icon name="menu" />
          </IconButton>
        )}
        <a href="/inbox" onClick={linkHandler('/inbox')} className="flex items-center gap-2 font-semibold text-slate-900">
          <img src="/favicon.svg" alt="" className="h-6 w-6" />
          {t('app.name')}
        </a>
        <LiveDot />
        <div className="ml-auto flex items-center gap-2">
          {!narrow && (
            <Button variant="primary" onClick={() => app.openCompose({ mode: 'new' })} data-testid="compose-open">
              <Icon name="compose" className="h-4 w-4" /> {t('nav.compose')}
            </Button>
          )}
          <LangSwitch />
          {!narrow && (
            <IconButton label={t('nav.help')} onClick={() => app.setHelpOpen(true)}>
              <Icon name="help" />
            </IconButton>
          )}
          {!narrow && (
            <IconButton label={t('auth.logout')} onClick={app.logout} data-testid="logout">
              <Icon name="logout" />
            </IconButton>
          )}
        </div>
      </header>
      {(app.live === 'lost' || !app.reachable) && (
        <div role="status" className="shrink-0 bg-amber-100 px-3 py-1.5 text-center text-sm text-amber-900" data-testid="live-banner">
          {t('live.lost')}
        </div>
      )}
      {app.storageFailed && (
        <div role="alert" className="shrink-0 bg-red-100 px-3 py-1.5 text-center text-sm text-red-900" data-testid="storage-failed-banner">
          {t(app.me.role === 'admin' ? 'storage.failed.admin' : 'storage.failed')}
        </div>
      )}
      {app.storageFull !== null && (
        <div role="alert" className="shrink-0 bg-red-100 px-3 py-1.5 text-center text-sm text-red-900" data-testid="storage-banner">
          {t('storage.full')}
          {app.storageFull && <span className="block break-all text-xs text-red-800">{app.storageFull}</span>}
        </div>
      )}
      <div className="flex min-h-0 flex-1">
        {!narrow && (
          <nav className="w-56 shrink-0 overflow-y-auto border-r border-slate-200 bg-white p-2" aria-label={t('nav.main')}>
            <NavLinks path={path} />
          </nav>
        )}
        <main id="main" className="min-h-0 min-w-0 flex-1">
          {children}
        </main>
      </div>
      {narrow && (
        <nav className="flex shrink-0 border-t border-slate-200 bg-white pb-[env(safe-area-inset-bottom)]" aria-label={t('nav.main')} data-testid="bottom-bar">
          {items.slice(0, 2).map((it) => (
            <BottomLink key={it.to} it={it} path={path} />
          ))}
          <button type="button" className="flex flex-1 flex-col items-center gap-0.5 py-1.5 text-[11px] text-blue-700" onClick={() => app.openCompose({ mode: 'new' })} data-testid="compose-open">
            <Icon name="compose" />
            {t('nav.compose')}
          </button>
          {items.slice(3, 5).map((it) => (
            <BottomLink key={it.to} it={it} path={path} />
          ))}
        </nav>
      )}
      {narrow && drawer && <Drawer path={path} onClose={() => setDrawer(false)} />}
      {app.compose && <ComposeDialog init={app.compose} />}
      {app.helpOpen && <HelpDialog onClose={() => app.setHelpOpen(false)} />}
      <Toasts />
    </div>
  )
}

function BottomLink({ it, path }: { it: NavItem; path: string }) {
  const active = it.match(path)
  return (
    <a
      href={it.to}
      onClick={linkHandler(it.to)}
      aria-current={active ? 'page' : undefined}
      className={`relative flex flex-1 flex-col items-center gap-0.5 py-1.5 text-[11px] ${active ? 'text-blue-700' : 'text-slate-600'}`}
      data-testid={`bottom-${it.icon}`}
    >
      <Icon name={it.icon} />
      <span>{it.label}</span>
      {!!it.count && (
        <span className={`absolute right-[25%] top-0.5 rounded-full px-1 text-[10px] leading-4 text-white ${it.countTone === 'amber' ? 'bg-amber-500' : 'bg-blue-600'}`} aria-label={it.countLabel}>
          {it.count}
        </span>
      )}
    </a>
  )
}

function Drawer({ path, onClose }: { path: string; onClose: () => void }) {
  const { t } = useI18n()
  const app = useApp()
  return (
    <div className="fixed inset-0 z-40" data-testid="drawer">
      <div className="absolute inset-0 bg-slate-900/40" onClick={onClose} aria-hidden="true" />
      <nav
        className="absolute inset-y-0 left-0 flex w-72 max-w-[85vw] flex-col bg-white p-2 pb-[env(safe-area-inset-bottom)] shadow-xl"
        aria-label={t('nav.main')}
        onKeyDown={(e) => e.key === 'Escape' && onClose()}
      >
        <div className="mb-2 flex items-center justify-between px-2">
          <span className="font-semibold">{t('app.name')}</span>
          <IconButton label={t('app.close')} onClick={onClose} autoFocus>
            <Icon name="close" />
          </IconButton>
        </div>
        <NavLinks path={path} onNavigate={onClose} />
        <div className="mt-auto flex flex-col gap-2 border-t border-slate-200 p-2">
          <p className="text-xs text-slate-500">{t('auth.signedInAs', { name: app.me.username })}</p>
          <Button onClick={app.logout}>
            <Icon name="logout" className="h-4 w-4" /> {t('auth.logout')}
          </Button>
        </div>
      </nav>
    </div>
  )
}

function LiveDot() {
  const { t } = useI18n()
  const { live } = useApp()
  const label = live === 'open' ? t('live.online') : live === 'lost' ? t('live.lost') : t('live.connecting')
  const c = live === 'open' ? 'bg-emerald-500' : live === 'lost' ? 'bg-amber-500' : 'bg-slate-300'
  return <span className={`h-2 w-2 rounded-full ${c}`} role="img" aria-label={label} title={label} data-testid="live-dot" data-state={live} />
}

function HelpDialog({ onClose }: { onClose: () => void }) {
  const { t } = useI18n()
  return (
    <Modal title={t('help.title')} onClose={onClose} testId="help">
      <table className="m-4 text-sm">
        <tbody>
          {SHORTCUTS.map((s) => (
            <tr key={s.action}>
              <td className="py-1 pr-4">
                {s.keys.map((k, i) => (
                  <span key={k}>
                    {i > 0 && ' / '}
                    <kbd className="rounded border border-slate-300 bg-slate-50 px-1.5 py-0.5 font-mono text-xs">{k}</kbd>
                  </span>
                ))}
              </td>
              <td className="py-1">{t(`help.action.${s.action}`)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Modal>
  )
}

function Toasts() {
  const { toasts, dismiss } = useApp()
  return (
    <div className="pointer-events-none fixed bottom-16 right-3 z-50 flex flex-col items-end gap-2 md:bottom-4" aria-live="polite">
      {toasts.map((x) => (
        <div
          key={x.id}
          role={x.tone === 'error' ? 'alert' : 'status'}
          className={`pointer-events-auto max-w-sm rounded-md px-3 py-2 text-sm shadow-lg ${x.tone === 'error' ? 'bg-red-700 text-white' : 'bg-slate-800 text-white'}`}
          onClick={() => dismiss(x.id)}
          data-testid="toast"
        >
          {x.text}
        </div>
      ))}
    </div>
  )
}
