// Keyboard shortcuts of the mailbox (issue 5 item 9), as a pure mapping from
// a key press to an action so it can be tested without a browser.

/** Action is what a shortcut does. */
export type Action =
  | 'next'
  | 'prev'
  | 'open'
  | 'back'
  | 'compose'
  | 'reply'
  | 'replyAll'
  | 'forward'
  | 'search'
  | 'markRead'
  | 'markUnread'
  | 'approve'
  | 'deny'
  | 'help'
  | 'escape'

/** KeyPress is the part of a KeyboardEvent the mapping reads. */
export interface KeyPress {
  key: string
  shiftKey?: boolean
  ctrlKey?: boolean
  metaKey?: boolean
  altKey?: boolean
  /** True when focus is in a text field, where letters must type, not act. */
  inEditable?: boolean
}

/** SHORTCUTS lists the shortcuts for the help dialog, in display order. */
export const SHORTCUTS: { keys: string[]; action: Action }[] = [
  { keys: ['j'], action: 'next' },
  { keys: ['k'], action: 'prev' },
  { keys: ['o', 'Enter'], action: 'open' },
  { keys: ['u'], action: 'back' },
  { keys: ['c'], action: 'compose' },
  { keys: ['r'], action: 'reply' },
  { keys: ['a'], action: 'replyAll' },
  { keys: ['f'], action: 'forward' },
  { keys: ['/'], action: 'search' },
  { keys: ['Shift+I'], action: 'markRead' },
  { keys: ['Shift+U'], action: 'markUnread' },
  { keys: ['y'], action: 'approve' },
  { keys: ['n'], action: 'deny' },
  { keys: ['?'], action: 'help' },
]

/** actionForKey maps a key press to an action, or null when the key is not a shortcut. */
export function actionForKey(e: KeyPress): Action | null {
  if (e.key === 'Escape') return 'escape'
  if (e.inEditable) return null
  if (e.ctrlKey || e.metaKey || e.altKey) return null
  switch (e.key) {
    case 'j':
      return 'next'
    case 'k':
      return 'prev'
    case 'o':
    case 'Enter':
      return 'open'
    case 'u':
      return 'back'
    case 'c':
      return 'compose'
    case 'r':
      return 'reply'
    case 'a':
      return 'replyAll'
    case 'f':
      return 'forward'
    case '/':
      return 'search'
    case 'I':
      return e.shiftKey ? 'markRead' : null
    case 'U':
      return e.shiftKey ? 'markUnread' : null
    case 'y':
      return 'approve'
    case 'n':
      return 'deny'
    case '?':
      return 'help'
    default:
      return null
  }
}

/** isEditableTarget tells whether keys typed at this element are text input. */
export function isEditableTarget(t: EventTarget | null): boolean {
  if (!t || !(t instanceof HTMLElement)) return false
  if (t.isContentEditable) return true
  const tag = t.tagName
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true
  if (tag === 'INPUT') {
    const type = (t as HTMLInputElement).type
    return !['checkbox', 'radio', 'button', 'submit', 'reset', 'file'].includes(type)
  }
  return false
}
