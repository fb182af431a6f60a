// Browser test of run control (issue 16) against a really started
// `agentmail serve`. Run with `npm --prefix web run test:e2e`.
//
// The agent claude reports a running turn with its progress; the person
// sees the live run card in the conversation, presses Stop, reads what the
// confirmation says stops, confirms, and the gateway records the stop and
// tells the agent's stream; the agent reports the stopped run and the card
// moves to the history with who stopped it and the transcript link. A narrow
// screen shows the card and its button too. While the agent works in a
// conversation, the compose box says what a mail that says only "stop" does,
// and the inbox marks the conversation in words (any running run of it, not
// only the latest), in English and Chinese, on a 390 px screen too.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { launchBrowser, screenshotDir, signedInPage, startWithAgent, waitFor } from './harness.mjs'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-runs'

let work, ws, gw, browser, page, admin, agent, shots, sessionId, mailId

const RUN = 'run-e2e-1'

before(async () => {
  ;({ work, ws, gw, admin, agent } = await startWithAgent('runs', ADMIN, PASSWORD, 'claude'))
  shots = screenshotDir()
  const opened = await admin.post('/me/mail/send', { to: `claude@${ws}.new`, subject: 'Refactor the parser', body: 'Go ahead.' })
  sessionId = opened.session_id
  mailId = opened.mail_id
  await agent.put(`/runs/${RUN}`, {
    session_id: sessionId, mail_id: mailId, state: 'running', model: 'anthropic/claude', attempt: 1,
    started_at: new Date(Date.now() - 42000).toISOString(), tool_calls: 3, last_tool: 'Bash', last_tool_input: 'sleep 300',
  })

  browser = await launchBrowser()
  page = await signedInPage(browser, gw.url, ADMIN, PASSWORD)
})

after(async () => {
  await browser?.close()
  await gw?.stop()
  if (work && !process.env.KEEP_E2E) rmSync(work, { recursive: true, force: true })
  if (ws) rmSync(ws, { recursive: true, force: true })
})

describe('run control in the page', () => {
  test('the live card shows the running turn and stops it after a confirmation', async () => {
    await page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`).click()
    const card = page.getByTestId('live-run')
    await card.waitFor()
    assert.equal(await card.getAttribute('data-state'), 'running')
    assert.match(await card.innerText(), /Tool calls: 3/)
    assert.match(await page.getByTestId('live-run-last-tool').innerText(), /Bash.*sleep 300/)
    await page.getByTestId('run-stop').click()
    const box = page.getByTestId('run-stop-confirm-box')
    assert.match(await box.innerText(), /Stop what claude is doing now\? The running turn ends, the commands it started are stopped/)
    await page.screenshot({ path: join(shots, 'run-stop-confirm.png') })
    // Nothing is stopped before the confirmation.
    let runs = await admin.get(`/me/sessions/${sessionId}/runs`)
    assert.equal(runs.runs[0].stop_requested_at, undefined)
    await page.getByTestId('run-stop-confirm').click()
    await page.getByTestId('live-run-stopping').filter({ hasText: 'Stopping (asked by admin)' }).waitFor()
    runs = await admin.get(`/me/sessions/${sessionId}/runs`)
    assert.equal(runs.runs[0].stopped_by, ADMIN)
    assert.ok(runs.runs[0].stop_requested_at)

    // The bridge reports the end: the card goes, the history says who stopped it.
    await agent.put(`/runs/${RUN}`, {
      session_id: sessionId, mail_id: mailId, state: 'finished', model: 'anthropic/claude', attempt: 1,
      started_at: new Date(Date.now() - 45000).toISOString(), ended_at: new Date().toISOString(), duration_ms: 45000,
      tool_calls: 3, stop_reason: 'stopped', stopped_by: ADMIN, quiescence: 'proven',
    })
    await waitFor(async () => (await page.getByTestId('live-run').count()) === 0, { what: 'the live card to go' })
    await page.getByTestId('runs').locator('summary').click()
    await page.getByTestId('run-stopped').filter({ hasText: 'Stopped by admin' }).waitFor()
  })

  test('a narrow screen shows the live card with its Stop button', async () => {
    await agent.put('/runs/run-e2e-2', {
      session_id: sessionId, mail_id: mailId, state: 'queued', attempt: 1, queue_position: 2, max_turns: 4,
    })
    const ctx = await browser.newContext({ viewport: { width: 375, height: 740 }, locale: 'en-US' })
    const narrow = await ctx.newPage()
    narrow.setDefaultTimeout(20000)
    await narrow.goto(gw.url + '/')
    await narrow.getByLabel('Username').fill(ADMIN)
    await narrow.getByLabel('Password').fill(PASSWORD)
    await narrow.getByRole('button', { name: 'Sign in' }).click()
    await narrow.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`).click()
    const card = narrow.locator('[data-testid="live-run"][data-run-id="run-e2e-2"]')
    await card.waitFor()
    assert.equal(await card.getAttribute('data-state'), 'queued')
    assert.match(await card.getByTestId('live-run-queue').innerText(), /Waiting for a free turn: 2 ahead \(the bridge runs at most 4 at once\)/)
    const button = await card.getByTestId('run-stop').boundingBox()
    assert.ok(button && button.x >= 0 && button.x + button.width <= 375, `the Stop button at ${JSON.stringify(button)} is off the screen`)
    await narrow.screenshot({ path: join(shots, 'run-card-narrow.png') })
    await ctx.close()
  })

  test('the compose box says what a stop mail does while the agent works', async () => {
    const opened = await admin.post('/me/mail/send', { to: `claude@${ws}.new`, subject: 'Write the docs', body: 'Please.' })
    const run = { session_id: opened.session_id, mail_id: opened.mail_id, attempt: 1, started_at: new Date(Date.now() - 5000).toISOString() }
    await agent.put('/runs/run-e2e-compose', { ...run, state: 'running' })
    await page.goto(gw.url + `/inbox/${encodeURIComponent(opened.session_id)}`)
    await page.getByTestId('action-reply').click()
    const hint = page.getByTestId('compose-stop-hint')
    await hint.waitFor()
    assert.equal(
      await hint.innerText(),
      'claude is working on a turn in this conversation now. A mail whose whole text is “stop” or “停止” stops that turn and starts no new one.',
    )
    await page.screenshot({ path: join(shots, 'compose-stop-hint.png') })
    await page.keyboard.press('Escape')
    await waitFor(async () => (await page.getByTestId('compose').count()) === 0, { what: 'the compose box to close' })
    await page.getByTestId('lang-zh').click()
    await page.getByTestId('action-reply').click()
    await hint.waitFor()
    assert.equal(await hint.innerText(), 'claude 正在这个会话中运行一轮。全文只有 “stop” 或 “停止” 的邮件会停止这一轮，不会开始新的一轮。')
    // The turn ends: the hint goes while the box stays open.
    await agent.put('/runs/run-e2e-compose', { ...run, state: 'finished', ended_at: new Date().toISOString(), duration_ms: 5000 })
    await waitFor(async () => (await hint.count()) === 0, { what: 'the hint to go once the turn ended' })
    assert.equal(await page.getByTestId('compose').count(), 1)
    await page.keyboard.press('Escape')
    await page.getByTestId('lang-en').click()
    await page.getByTestId('nav-inbox').filter({ hasText: 'Inbox' }).waitFor()
  })

  test('the inbox marks a conversation whose agent works, in words, on a 390 px screen', async () => {
    const opened = await admin.post('/me/mail/send', { to: `claude@${ws}.new`, subject: 'Index the repository', body: 'Go.' })
    const base = { session_id: opened.session_id, mail_id: opened.mail_id, attempt: 1 }
    // An older run still runs; the newest one ended: the mark follows the running one.
    await agent.put('/runs/run-e2e-older', { ...base, state: 'running', started_at: new Date(Date.now() - 60000).toISOString() })
    await agent.put('/runs/run-e2e-newer', {
      ...base, state: 'finished', attempt: 2, started_at: new Date(Date.now() - 10000).toISOString(), ended_at: new Date().toISOString(), duration_ms: 10000,
    })
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true })
    const narrow = await ctx.newPage()
    narrow.setDefaultTimeout(20000)
    await narrow.goto(gw.url + '/')
    await narrow.getByLabel('Username').fill(ADMIN)
    await narrow.getByLabel('Password').fill(PASSWORD)
    await narrow.getByRole('button', { name: 'Sign in' }).click()
    const row = narrow.locator(`[data-testid="session-row"][data-session-id="${opened.session_id}"]`)
    const mark = row.getByTestId('row-running')
    await mark.waitFor()
    assert.equal(await mark.innerText(), 'Running')
    const box = await mark.boundingBox()
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390 && box.width > 20, `the mark at ${JSON.stringify(box)} is not on the screen`)
    await narrow.screenshot({ path: join(shots, 'inbox-running-390.png') })
    // A conversation whose run ended carries no mark.
    const done = await admin.get('/me/sessions')
    for (const s of done.sessions ?? []) {
      if (s.session_id === opened.session_id) continue
      const other = narrow.locator(`[data-testid="session-row"][data-session-id="${s.session_id}"]`)
      if ((await other.count()) === 1 && !(s.running_turns > 0)) {
        assert.equal(await other.getByTestId('row-running').count(), 0, `conversation ${s.subject} is marked running`)
      }
    }
    await narrow.getByTestId('lang-zh').click()
    await waitFor(async () => (await mark.innerText()) === '运行中', { what: 'the Chinese mark' })
    await narrow.screenshot({ path: join(shots, 'inbox-running-390-zh.png') })
    // The running run ends: the mark goes, live.
    await agent.put('/runs/run-e2e-older', {
      ...base, state: 'finished', started_at: new Date(Date.now() - 60000).toISOString(), ended_at: new Date().toISOString(), duration_ms: 60000,
    })
    await waitFor(async () => (await row.getByTestId('row-running').count()) === 0, { what: 'the mark to go once no run runs' })
    await narrow.getByTestId('lang-en').click()
    await ctx.close()
  })
})
