// Browser tests of importance, acknowledgements and file reservations
// (issue 21) against a really started `agentmail serve` with its own data
// directory. Run with `npm --prefix web run test:e2e`.
//
// The agent pi writes an urgent mail that asks for an acknowledgement; the
// person sees it stand out, finds it under "Urgent only", acknowledges it
// with the button, writes back asking for one, sees it waiting, and
// downloads the conversation as Markdown, and releases pi's file
// reservation from the reservations page.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { launchBrowser, screenshotDir, signedInPage, startWithAgent, waitFor } from './harness.mjs'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-coord'

let work, ws, gw, browser, page, admin, pi, shots
let urgentId, sessionId

before(async () => {
  ;({ work, ws, gw, admin, agent: pi } = await startWithAgent('coord', ADMIN, PASSWORD, 'pi'))
  shots = screenshotDir()

  // The person opens a conversation with pi in the workspace; pi answers
  // urgently, asking for an acknowledgement, and reserves src/**.
  const opened = await admin.post('/me/mail/send', { to: `pi@${ws}.new`, subject: 'Release plan', body: 'What is left?' })
  sessionId = opened.session_id
  const sent = await pi.post('/mail/send', {
    to: ADMIN, reply_to: opened.mail_id, body: 'The build server is down: **stop merging**.', importance: 'urgent', ack_required: true,
  })
  urgentId = sent.mail_id
  await pi.post('/mail/send', { to: ADMIN, reply_to: opened.mail_id, body: 'A small note.', importance: 'low' })
  const res = await pi.post('/reservations', { workspace: ws, paths: ['src/**'], reason: 'rewriting the build' })
  assert.equal(res.granted.length, 1)

  browser = await launchBrowser()
  page = await signedInPage(browser, gw.url, ADMIN, PASSWORD)
})

after(async () => {
  await browser?.close()
  await gw?.stop()
  if (work && !process.env.KEEP_E2E) rmSync(work, { recursive: true, force: true })
  if (ws) rmSync(ws, { recursive: true, force: true })
})

describe('importance, acknowledgements and reservations in the page', () => {
  test('an urgent mail stands out in the list and under "Urgent only"', async () => {
    const row = page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`)
    await row.getByTestId('importance-badge').filter({ hasText: 'Urgent' }).waitFor()
    await page.getByTestId('show-urgent').click()
    const rows = page.getByTestId('important-row')
    await rows.first().waitFor()
    assert.equal(await rows.count(), 1)
    assert.equal(await rows.first().getAttribute('data-importance'), 'urgent')
    await page.getByTestId('show-important').click()
    await waitFor(async () => (await rows.count()) === 1, { what: 'high and urgent mails' })
    await page.getByTestId('show-all').click()
    await row.waitFor()
  })

  test('the recipient acknowledges with the button; reading alone did not', async () => {
    await page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`).click()
    const mail = page.locator(`[data-testid="mail"][data-mail-id="${urgentId}"]`)
    await mail.waitFor()
    assert.equal(await mail.getAttribute('data-importance'), 'urgent')
    await mail.getByTestId('importance-badge').waitFor()
    // It stands out: a thick red frame and a red badge, where the low one has neither.
    // (Colours are read back through a canvas: the page's are oklch.)
    const look = (loc) => loc.evaluate((el) => {
      const rgb = (c) => {
        const x = document.createElement('canvas').getContext('2d')
        x.fillStyle = c
        x.fillRect(0, 0, 1, 1)
        return Array.from(x.getImageData(0, 0, 1, 1).data.slice(0, 3))
      }
      const cs = getComputedStyle(el)
      const badge = el.querySelector('[data-testid="importance-badge"]')
      return { width: cs.borderTopWidth, frame: rgb(cs.borderTopColor), badge: badge ? rgb(getComputedStyle(badge).backgroundColor) : null }
    })
    const red = ([r, g, b]) => r > 180 && g < 110 && b < 110
    const urgent = await look(mail)
    const low = await look(page.locator('[data-testid="mail"][data-importance="low"]'))
    assert.equal(urgent.width, '2px')
    assert.ok(red(urgent.frame), `the urgent mail's frame is ${urgent.frame}, not red`)
    assert.ok(red(urgent.badge), `the urgent badge is ${urgent.badge}, not red`)
    assert.equal(low.width, '1px')
    assert.ok(!red(low.frame) && !red(low.badge), `the low mail looks urgent: ${JSON.stringify(low)}`)
    const before = await pi.get(`/mail/${urgentId}`)
    assert.equal(before.acks[0].acked_at, undefined, 'opening the mail acknowledged it')
    await mail.getByTestId('ack-button').click()
    await mail.getByTestId('ack-done').waitFor()
    const after = await pi.get(`/mail/${urgentId}`)
    assert.equal(after.acks[0].name, ADMIN)
    assert.ok(after.acks[0].acked_at, 'pi sees the acknowledgement')
    await page.screenshot({ path: join(shots, 'coordination-ack.png') })
  })

  test('the conversation downloads as Markdown with its importance, acknowledgement and every mail', async () => {
    const conv = page.getByTestId('conversation')
    await conv.waitFor()
    assert.equal(await conv.getAttribute('data-session-id'), sessionId)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('conv-export').click()])
    assert.match(download.suggestedFilename(), /\.md$/)
    const md = readFileSync(await download.path(), 'utf8')
    assert.match(md, new RegExp(`^---\nsession_id: "${sessionId}"\n`))
    assert.match(md, /mails: 3\n/)
    assert.match(md, /What is left\?/)
    assert.match(md, /The build server is down: \*\*stop merging\*\*\./)
    assert.match(md, /\*Importance: Urgent · Acknowledgement requested: admin ✓ /)
    assert.match(md, /A small note\./)
    assert.match(md, /\*Importance: Low\*/)
  })

  test('compose sends importance and an acknowledgement request; the waiting view lists it', async () => {
    await page.getByTestId('compose-open').click()
    await page.getByTestId('compose-to').fill(`pi@${ws}`)
    await page.getByTestId('compose-subject').fill('Confirm the freeze')
    await page.getByTestId('compose-body').fill('Please confirm.')
    await page.getByTestId('compose-importance').selectOption('high')
    await page.getByTestId('compose-ack').check()
    await page.getByTestId('compose-send').click()
    await page.getByTestId('compose').waitFor({ state: 'detached' })
    const inbox = await waitFor(async () => {
      const l = await pi.get('/mail/inbox?status=all&mark_read=false&limit=50')
      return l.mails.find((m) => m.subject === 'Confirm the freeze')
    }, { what: 'the mail at pi' })
    assert.equal(inbox.importance, 'high')
    assert.equal(inbox.ack_required, true)

    await page.getByTestId('nav-acks').click()
    const item = page.locator(`[data-testid="ack-item"][data-mail-id="${inbox.mail_id}"]`)
    await item.waitFor()
    assert.equal(await item.getAttribute('data-role'), 'sender')
    // The name sits in the sentence as an isolated run (U+2068 … U+2069), so it cannot reorder it.
    assert.match(await item.innerText(), /waiting for \u2068pi\u2069/)
    await pi.post(`/mail/${inbox.mail_id}/ack`)
    await page.reload()
    await page.getByTestId('acks-empty').waitFor()
  })

  test('the reservations page shows the workspace and releases a reservation', async () => {
    await page.getByTestId('nav-reservations').click()
    const row = page.locator('[data-testid="res-row"][data-path="src/**"][data-holder="pi"]')
    await row.waitFor()
    assert.match(await row.innerText(), /rewriting the build/)
    assert.match(await row.innerText(), /Exclusive/)
    await page.screenshot({ path: join(shots, 'coordination-reservations.png') })
    await row.getByTestId('res-release').click()
    await page.getByTestId('res-empty').waitFor()
    const left = await pi.get('/reservations')
    assert.equal(left.reservations.length, 0)
    await page.getByTestId('lang-zh').click()
    await page.getByRole('heading', { name: '文件预留' }).waitFor()
    await page.getByTestId('lang-en').click()
  })
})
