// Browser test: text written by others is shown as it is held. A subject and
// a body carrying U+202E RIGHT-TO-LEFT OVERRIDE must not read reversed
// ("Invoice exe.pdf") on the page: the list, the conversation's title and
// the body show the code point, <U+202E>, in a real Chromium against a
// started `agentmail serve`. And a later mail of the conversation with a
// subject of its own shows that subject; a reply that only repeats the
// title ("Re: …") does not. Independent of the other files: its own gateway
// and data directory.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { launchBrowser, screenshotDir, signedInPage, startWithAgent } from './harness.mjs'
import { join } from 'node:path'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-1'
const SPOOF_SUBJECT = 'Invoice \u202efdp.exe\u202c from CEO'
const SPOOF_BODY = 'Look: \u202eevil\u202c and \u2066hidden\u2069\u200b'

let work, ws, gw, admin, agent, browser, page
let sessionId, spoofMailId, replyMailId, ownMailId

before(async () => {
  ;({ work, ws, gw, admin, agent } = await startWithAgent('usertext', ADMIN, PASSWORD, 'pi'))
  // A person opens the conversation; the agent answers in it.
  const opened = await admin.post('/me/mail/send', { to: `pi@${ws}.new`, subject: SPOOF_SUBJECT, body: SPOOF_BODY, round_budget: 5 })
  sessionId = opened.session_id
  spoofMailId = opened.mail_id
  const reply = await agent.post('/mail/send', { to: ADMIN, subject: `Re: ${SPOOF_SUBJECT}`, body: 'Paid.', reply_to: spoofMailId })
  replyMailId = reply.mail_id
  // A later mail to the bare name with a subject of its own.
  const own = await agent.post('/mail/send', { to: ADMIN, subject: 'Deploy plan changed', body: 'We deploy on Friday now.', reply_to: spoofMailId })
  ownMailId = own.mail_id
  assert.equal(own.session_id, sessionId, 'the later mail is in the same conversation')

  browser = await launchBrowser()
  page = await signedInPage(browser, gw.url, ADMIN, PASSWORD)
})

after(async () => {
  if (page) await page.screenshot({ path: join(screenshotDir(), 'usertext.png') }).catch(() => {})
  await browser?.close()
  await gw?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
  if (ws) rmSync(ws, { recursive: true, force: true })
})

describe('text written by others', () => {
  test('a subject with a right-to-left override shows the code point in the list and the conversation', async () => {
    await page.goto(`${gw.url}/inbox`)
    const row = page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`)
    await row.waitFor()
    const rowSubject = await row.getByTestId('row-subject').innerText()
    assert.ok(rowSubject.includes('Invoice <U+202E>fdp.exe<U+202C> from CEO'), `row shows the code point: ${JSON.stringify(rowSubject)}`)
    assert.ok(!/[\u202a-\u202e\u2066-\u2069\u200b]/.test(rowSubject), 'no raw direction control in the row')

    await page.goto(`${gw.url}/inbox/${sessionId}`)
    const title = page.getByTestId('conv-subject')
    await title.waitFor()
    const shown = await title.innerText()
    assert.equal(shown, 'Invoice <U+202E>fdp.exe<U+202C> from CEO')
    // What a person sees: the text laid out left to right as written, "fdp.exe"
    // before " from", never "exe.pdf".
    assert.ok(!shown.includes('exe.pdf'))
    const label = await page.getByTestId('conversation').getAttribute('aria-label')
    assert.ok(!/[\u202a-\u202e]/.test(label), 'the conversation label holds no raw override')
  })

  test('a body with overrides, isolates and zero-width characters shows each as its code point', async () => {
    const body = page.locator(`[data-testid="mail"][data-mail-id="${spoofMailId}"] .md-body`)
    await body.waitFor()
    const text = await body.innerText()
    assert.ok(text.includes('Look: <U+202E>evil<U+202C> and <U+2066>hidden<U+2069><U+200B>'), `body shows code points: ${JSON.stringify(text)}`)
    assert.ok(!/[\u202a-\u202e\u2066-\u2069\u200b]/.test(text), 'no raw control in the body')
    const isolation = await body.evaluate((el) => getComputedStyle(el).unicodeBidi)
    assert.equal(isolation, 'isolate')
  })

  test('a later mail with a subject of its own shows it; a reply that repeats the title does not', async () => {
    const own = page.locator(`[data-testid="mail"][data-mail-id="${ownMailId}"]`)
    await own.waitFor()
    assert.equal(await own.getByTestId('mail-subject').innerText(), 'Subject: Deploy plan changed')
    const reply = page.locator(`[data-testid="mail"][data-mail-id="${replyMailId}"]`)
    await reply.waitFor()
    assert.equal(await reply.getByTestId('mail-subject').count(), 0)
    const first = page.locator(`[data-testid="mail"][data-mail-id="${spoofMailId}"]`)
    assert.equal(await first.getByTestId('mail-subject').count(), 0)
  })

  test('the own subject is labelled in Chinese too', async () => {
    await page.getByTestId('lang-zh').click()
    await page.getByTestId('nav-inbox').filter({ hasText: '收件箱' }).waitFor()
    const own = page.locator(`[data-testid="mail"][data-mail-id="${ownMailId}"]`)
    await own.waitFor()
    await own.getByTestId('mail-subject').filter({ hasText: '主题' }).waitFor()
    assert.equal(await own.getByTestId('mail-subject').innerText(), '主题: Deploy plan changed')
  })
})
