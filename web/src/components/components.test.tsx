// Component-level checks of the budget badge and the reply fields, rendered
// with React into jsdom.
import { act } from 'react'
import { createRoot, type Root } from 'react-dom/client'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BudgetBadge } from './Budget'
import { initialFields } from './Compose'
import type { Mail } from '../api/types'

// React's act() wants to know it runs in a test environment.
;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true

let host: HTMLDivElement
let root: Root
beforeEach(() => {
  host = document.createElement('div')
  document.body.appendChild(host)
  root = createRoot(host)
})
afterEach(() => {
  act(() => root.unmount())
  host.remove()
})

describe('BudgetBadge', () => {
  it('renders nothing for an unlimited budget', () => {
    act(() => root.render(<BudgetBadge max={0} used={3} />))
    expect(host.innerHTML).toBe('')
  })
  it('is orange with one round left and red when spent', () => {
    act(() => root.render(<BudgetBadge max={5} used={4} />))
    const b = host.querySelector('[data-testid="budget-badge"]')!
    expect(b.getAttribute('data-tone')).toBe('last')
    expect(b.className).toContain('orange')
    expect(b.textContent).toBe('4/5')
    act(() => root.render(<BudgetBadge max={5} used={5} />))
    const r = host.querySelector('[data-testid="budget-badge"]')!
    expect(r.getAttribute('data-tone')).toBe('spent')
    expect(r.className).toContain('red')
  })
  it('is a button when it can be edited, even when unlimited', () => {
    let clicks = 0
    act(() => root.render(<BudgetBadge max={0} used={0} onClick={() => clicks++} />))
    const b = host.querySelector('button')!
    act(() => b.click())
    expect(clicks).toBe(1)
  })
})

const mail: Mail = {
  mail_id: 'm1',
  session_id: 's1',
  session_alias: 'fix-leak',
  from_name: 'pi',
  from_kind: 'agent',
  from_address: 'pi@/root.fix-leak',
  recipients: [
    { name: 'alice', kind: 'person', role: 'to', address: 'alice' },
    { name: 'bob', kind: 'person', role: 'cc', address: 'bob' },
    { name: 'dsh', kind: 'agent', role: 'cc', address: 'dsh@/srv.x' },
  ],
  subject: 'Leak found',
  body: 'b',
  mail_type: 'normal',
  attachments: [],
  created_at: '2026-01-01T00:00:00Z',
  read: false,
  importance: 'normal',
  ack_required: false,
}

describe('initialFields', () => {
  it('replies to the sender with Re:', () => {
    expect(initialFields({ mode: 'reply', mail }, 'alice')).toEqual({ to: 'pi@/root.fix-leak', cc: '', subject: 'Re: Leak found' })
  })
  it('reply-all copies the other recipients but not me', () => {
    expect(initialFields({ mode: 'replyAll', mail }, 'alice').cc).toBe('bob, dsh@/srv.x')
  })
  it('does not stack prefixes', () => {
    expect(initialFields({ mode: 'reply', mail: { ...mail, subject: 'Re: Leak found' } }, 'alice').subject).toBe('Re: Leak found')
  })
  it('replying to my own mail goes to its recipient', () => {
    expect(initialFields({ mode: 'reply', mail: { ...mail, from_name: 'alice' } }, 'alice').to).toBe('alice')
  })
  it('forward starts with an empty address', () => {
    expect(initialFields({ mode: 'forward', mail }, 'alice')).toEqual({ to: '', cc: '', subject: 'Fwd: Leak found' })
  })
})
