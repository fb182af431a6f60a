// Compose drafts kept in localStorage, so a mail being written survives a
// closed dialog, a reload or a crash; sending (or discarding) removes it.

import type { Attachment } from '../api/types'

/** Draft is what the compose form holds; attachments are the finished uploads. */
export interface Draft {
  to: string
  cc: string
  subject: string
  body: string
  budget: string
  attachments: Attachment[]
}

/** DraftStart is the form as it opened (the reply's address and subject), for telling a touched form. */
export type DraftStart = Pick<Draft, 'to' | 'cc' | 'subject'>

function isAttachment(a: unknown): a is Attachment {
  const x = a as Partial<Attachment> | null
  return !!x && typeof x.attachment_id === 'string' && typeof x.filename === 'string' && typeof x.size === 'number'
}

/** readDraft checks a stored value; anything malformed reads as no draft. */
export function readDraft(raw: unknown): Draft | null {
  if (!raw || typeof raw !== 'object') return null
  const r = raw as Record<string, unknown>
  const str = (k: string) => (typeof r[k] === 'string' ? (r[k] as string) : null)
  const to = str('to'), cc = str('cc'), subject = str('subject'), body = str('body'), budget = str('budget')
  if (to === null || cc === null || subject === null || body === null || budget === null) return null
  const attachments = Array.isArray(r.attachments) ? r.attachments.filter(isAttachment) : []
  return { to, cc, subject, body, budget, attachments }
}

/** isUntouched is true when the form holds only what it opened with: nothing to keep or lose. */
export function isUntouched(d: Draft, start: DraftStart): boolean {
  return (
    d.to.trim() === start.to.trim() &&
    d.cc.trim() === start.cc.trim() &&
    d.subject.trim() === start.subject.trim() &&
    d.body.trim() === '' &&
    d.budget.trim() === '' &&
    d.attachments.length === 0
  )
}
