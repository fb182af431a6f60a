// The compose dialog against a stand-in API: one send per click or shortcut,
// no mail without its attachments, drafts that survive closing, and the
// round budget's own error.
import { act } from 'react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '../api/client'
import type { Attachment, Resolution, SendMailResponse } from '../api/types'
import { ComposeDialog } from './Compose'
import type { ComposeInit } from '../state'
import { chooseFiles, click, deferred, fakeApp, mount, press, settle, typeInto, type FakeApp, type Mounted } from '../test-utils'

vi.mock('../api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('../api/client')>()
  return {
    ...real,
    api: {
      ...real.api,
      resolve: vi.fn(),
      suggest: vi.fn(),
      send: vi.fn(),
      forward: vi.fn(),
      upload: vi.fn(),
    },
  }
})
const { api } = await import('../api/client')
const resolve = vi.mocked(api.resolve)
const send = vi.mocked(api.send)
const upload = vi.mocked(api.upload)

const NEW_SESSION: Resolution = { address: 'pi@/w.new', name: 'pi', kind: 'agent', workspace: '/w', session: 'new', exists: false }
const SENT: SendMailResponse = { status: 'sent', mail_id: 'm9', session_id: 's9', session_alias: 'a', new_session: true, budget_remaining: 0, budget_max: 0 }
const ATT: Attachment = { attachment_id: 'att1', filename: 'notes.txt', size: 5, sha256: 'x', content_type: 'text/plain', created_at: '2026-01-01T00:00:00Z' }

let m: Mounted | undefined
let app: FakeApp

beforeEach(() => {
  window.localStorage.clear()
  resolve.mockReset().mockResolvedValue(NEW_SESSION)
  vi.mocked(api.suggest).mockReset().mockResolvedValue({ suggestions: [] })
  send.mockReset().mockResolvedValue(SENT)
  upload.mockReset()
  app = fakeApp()
})
afterEach(() => {
  m?.unmount()
  m = undefined
})

function open(init: ComposeInit = { mode: 'new', to: 'pi@/w.new' }): Mounted {
  m = mount(<ComposeDialog init={init} />, app)
  return m
}

/** ready waits until the address preview has the gateway's answer. */
async function ready(x: Mounted) {
  await vi.waitFor(() => expect(x.q('address-preview').getAttribute('data-tone')).toBe('new'), { timeout: 5000 })
}

function form(x: Mounted): HTMLFormElement {
  return x.q('compose').querySelector('form')!
}

const ctrlEnter = (x: Mounted) => press(x.q('compose-body'), 'Enter', { ctrlKey: true })

describe('ComposeDialog sends once', () => {
  it('two quick Ctrl+Enter and a click send one mail', async () => {
    const pending = deferred<SendMailResponse>()
    send.mockReturnValue(pending.promise)
    const x = open()
    typeInto(x.q('compose-subject'), 'Find the leak')
    typeInto(x.q('compose-body'), 'please')
    await ready(x)
    ctrlEnter(x)
    ctrlEnter(x)
    click(x.q('compose-send'))
    form(x).requestSubmit()
    expect(send).toHaveBeenCalledTimes(1)
    pending.resolve(SENT)
    await settle()
    expect(app.closeCompose).toHaveBeenCalledTimes(1)
  })

  it('can send again after a failed send', async () => {
    send.mockRejectedValueOnce(new ApiError(500, { error: 'boom', code: 'internal' }))
    const x = open()
    typeInto(x.q('compose-subject'), 'S')
    await ready(x)
    ctrlEnter(x)
    await vi.waitFor(() => expect(x.q('compose-error').textContent).toContain('boom'))
    ctrlEnter(x)
    await vi.waitFor(() => expect(send).toHaveBeenCalledTimes(2))
  })
})

describe('ComposeDialog keeps attachments', () => {
  it('refuses to send while an upload runs or failed, and retries it', async () => {
    const first = deferred<Attachment>()
    upload.mockReturnValueOnce(first.promise)
    const x = open()
    typeInto(x.q('compose-subject'), 'With a file')
    await ready(x)
    chooseFiles(x.q<HTMLInputElement>('compose-file'), [new File(['hello'], 'notes.txt', { type: 'text/plain' })])
    expect(x.q('compose-attachments').querySelector('li')!.getAttribute('data-state')).toBe('uploading')

    ctrlEnter(x)
    click(x.q('compose-send'))
    expect(send).not.toHaveBeenCalled()
    // Said once, beside Send, not a second time above it.
    expect(x.q('compose-upload-block').textContent).toMatch(/upload/i)
    expect(x.has('compose-error')).toBe(false)

    first.reject(new ApiError(503, { error: 'the gateway is restarting', code: 'unavailable' }))
    await vi.waitFor(() => expect(x.q('compose-attachments').querySelector('li')!.getAttribute('data-state')).toBe('error'))
    ctrlEnter(x)
    click(x.q('compose-send'))
    expect(send).not.toHaveBeenCalled()
    expect(x.q('compose-upload-block').textContent).toContain('notes.txt')
    expect(x.has('compose-error')).toBe(false)

    upload.mockResolvedValueOnce(ATT)
    click(x.q('compose-attachments').querySelector('[data-testid="upload-retry"]')!)
    await vi.waitFor(() => expect(x.q('compose-attachments').querySelector('li')!.getAttribute('data-state')).toBe('done'))
    ctrlEnter(x)
    await vi.waitFor(() => expect(send).toHaveBeenCalledTimes(1))
    expect(send.mock.calls[0][0].attachment_ids).toEqual(['att1'])
  })

  it('offers no retry for a file over the size limit, only its removal', async () => {
    upload.mockRejectedValueOnce(new ApiError(413, { error: 'the attachment is larger than the limit of 25 MiB', code: 'attachment_too_large' }))
    const x = open()
    typeInto(x.q('compose-subject'), 'S')
    await ready(x)
    chooseFiles(x.q<HTMLInputElement>('compose-file'), [new File(['x'], 'big.bin')])
    await vi.waitFor(() => expect(x.q('compose-attachments').querySelector('li')!.getAttribute('data-state')).toBe('error'))
    expect(x.q('compose-attachments').querySelector('[data-testid="upload-retry"]')).toBeNull()
    expect(x.q('compose-upload-block').textContent).toMatch(/^Too large to send: big\.bin\. Remove/)
    ctrlEnter(x)
    expect(send).not.toHaveBeenCalled()
    expect(x.has('compose-error')).toBe(false)
  })

  it('sends without the file once the failed upload is removed', async () => {
    upload.mockRejectedValueOnce(new ApiError(413, { error: 'attachment too large', code: 'attachment_too_large' }))
    const x = open()
    typeInto(x.q('compose-subject'), 'S')
    await ready(x)
    chooseFiles(x.q<HTMLInputElement>('compose-file'), [new File(['x'], 'big.bin')])
    await vi.waitFor(() => expect(x.q('compose-attachments').querySelector('li')!.getAttribute('data-state')).toBe('error'))
    click(x.q('compose-attachments').querySelector('[data-testid="upload-remove"]')!)
    ctrlEnter(x)
    await vi.waitFor(() => expect(send).toHaveBeenCalledTimes(1))
    expect(send.mock.calls[0][0].attachment_ids).toEqual([])
  })
})

describe('ComposeDialog keeps drafts', () => {
  it('asks before discarding on Escape and on the backdrop', () => {
    const x = open()
    typeInto(x.q('compose-body'), 'half a thought')
    press(x.q('compose-body'), 'Escape')
    expect(app.closeCompose).not.toHaveBeenCalled()
    expect(x.has('discard-confirm')).toBe(true)
    click(x.q('discard-keep-editing'))
    expect(x.has('discard-confirm')).toBe(false)
    expect(x.q<HTMLTextAreaElement>('compose-body').value).toBe('half a thought')

    const backdrop = x.q('compose').parentElement!
    act(() => {
      backdrop.dispatchEvent(new MouseEvent('mousedown', { bubbles: true }))
    })
    expect(app.closeCompose).not.toHaveBeenCalled()
    click(x.q('discard-confirm-discard'))
    expect(app.closeCompose).toHaveBeenCalledTimes(1)
    expect(JSON.stringify(window.localStorage)).not.toContain('half a thought')
  })

  it('closes an untouched form at once', () => {
    const x = open()
    press(x.q('compose-body'), 'Escape')
    expect(app.closeCompose).toHaveBeenCalledTimes(1)
  })

  it('restores the draft on reopen and clears it once sent', async () => {
    let x = open()
    typeInto(x.q('compose-subject'), 'Draft subject')
    typeInto(x.q('compose-body'), 'draft body')
    press(x.q('compose-body'), 'Escape')
    click(x.q('discard-keep-draft'))
    expect(app.closeCompose).toHaveBeenCalledTimes(1)
    x.unmount()

    x = open()
    expect(x.q<HTMLInputElement>('compose-subject').value).toBe('Draft subject')
    expect(x.q<HTMLTextAreaElement>('compose-body').value).toBe('draft body')
    await ready(x)
    ctrlEnter(x)
    await vi.waitFor(() => expect(app.closeCompose).toHaveBeenCalledTimes(2))
    expect(send.mock.calls[0][0]).toMatchObject({ subject: 'Draft subject', body: 'draft body' })
    x.unmount()

    x = open()
    expect(x.q<HTMLInputElement>('compose-subject').value).toBe('')
    expect(x.q<HTMLTextAreaElement>('compose-body').value).toBe('')
  })

  it('keeps drafts of a reply apart from a new mail', () => {
    const mail = {
      mail_id: 'm1', session_id: 's1', session_alias: 'a', from_name: 'pi', from_kind: 'agent' as const, from_address: 'pi@/w.a',
      recipients: [], subject: 'Leak', body: '', mail_type: 'normal' as const, attachments: [], created_at: '2026-01-01T00:00:00Z', read: true,
      importance: 'normal' as const, ack_required: false,
    }
    let x = open({ mode: 'reply', mail })
    typeInto(x.q('compose-body'), 'reply text')
    x.unmount()
    x = open()
    expect(x.q<HTMLTextAreaElement>('compose-body').value).toBe('')
    x.unmount()
    x = open({ mode: 'reply', mail })
    expect(x.q<HTMLTextAreaElement>('compose-body').value).toBe('reply text')
  })
})

describe('ComposeDialog round budget', () => {
  it.each(['1.5', '99999999999', '-1', '10001', 'abc'])('%s is a budget error, not an address error', async (bad) => {
    const x = open()
    typeInto(x.q('compose-subject'), 'S')
    typeInto(x.q('compose-budget'), bad)
    await ready(x)
    ctrlEnter(x)
    expect(send).not.toHaveBeenCalled()
    const err = x.q('compose-error').textContent ?? ''
    expect(err).not.toMatch(/address/i)
    expect(err).toMatch(/budget/i)
    const budget = x.q<HTMLInputElement>('compose-budget')
    expect(budget.getAttribute('aria-invalid')).toBe('true')
    expect(document.getElementById(budget.getAttribute('aria-describedby')!)!.textContent).toMatch(/0.*10000/)
  })

  it.each([['', undefined], ['0', 0], ['10000', 10000], [' 7 ', 7]])('%j is sent as %j', async (text, want) => {
    const x = open()
    typeInto(x.q('compose-subject'), 'S')
    typeInto(x.q('compose-budget'), text)
    await ready(x)
    ctrlEnter(x)
    await vi.waitFor(() => expect(send).toHaveBeenCalledTimes(1))
    expect(send.mock.calls[0][0].round_budget).toBe(want)
  })
})
