// Browser test of delegated sessions (issue 15 points 5 and 6) against a
// really started `agentmail serve`. Run with `npm --prefix web run test:e2e`.
//
// The person asks claude; claude's turn (its turn token) delegates to pi,
// which answers. The person's conversation shows "delegated to pi: sub-t
// (2/20 rounds)" in the view and in the tree, each a link to the delegated
// session, whose view links back to the origin; both languages.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Api, Gateway, buildBinary, freePort, launchBrowser, screenshotDir, signedInPage, tempDir } from './harness.mjs'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-deleg'

let work, ws1, ws2, gw, browser, page, shots
let origin, delegated

before(async () => {
  work = tempDir('agentmail-e2e-deleg-')
  ws1 = tempDir('agentmail-ws-deleg1-')
  ws2 = tempDir('agentmail-ws-deleg2-')
  const bin = buildBinary(work)
  gw = new Gateway({ bin, port: await freePort(), dataDir: join(work, 'data'), adminUser: ADMIN, adminPassword: PASSWORD })
  await gw.start()
  shots = screenshotDir()
  const admin = new Api(gw.url)
  await admin.login(ADMIN, PASSWORD)
  const agent = async (name, ws) => {
    const key = await admin.post('/admin/agent-keys', { agent_name: name, lifecycle: 'permanent', label: 'e2e' })
    const api = new Api(gw.url, { bearer: key.key_token })
    await api.post('/agent/register', { name, platform: name, workspaces: [{ name: 'work', path: ws }] })
    return api
  }
  const claude = await agent('claude', ws1)
  const pi = await agent('pi', ws2)

  origin = await admin.post('/me/mail/send', { to: `claude@${ws1}.new`, subject: 'compute T', body: 'Ask pi to compute T.' })
  const tok = await claude.post('/agent/turn-tokens', { session_id: origin.session_id })
  const turn = new Api(gw.url, { bearer: tok.token })
  delegated = await turn.post('/mail/send', { to: `pi@${ws2}.new`, subject: 'sub T', body: 'Please compute T.' })
  assert.ok(delegated.new_session)
  const inbox = await pi.get('/mail/inbox?status=all&mark_read=false')
  const ask = inbox.mails.find((m) => m.mail_id === delegated.mail_id)
  const answer = await pi.post('/mail/send', { to: ask.from_address, reply_to: ask.mail_id, body: 'T is 42' })
  await claude.post('/mail/send', { to: `${ADMIN}@.${origin.session_alias}`, reply_to: answer.mail_id, body: 'T is 42, says pi.',
    relay: 'summary', relay_key: 'final-1' })

  browser = await launchBrowser()
  page = await signedInPage(browser, gw.url, ADMIN, PASSWORD)
})

after(async () => {
  await browser?.close()
  await gw?.stop()
  if (work && !process.env.KEEP_E2E) rmSync(work, { recursive: true, force: true })
  for (const d of [ws1, ws2]) if (d) rmSync(d, { recursive: true, force: true })
})

describe('delegated sessions in the page', () => {
  test('the origin shows its delegated session with its own rounds and links to it', async () => {
    await page.locator(`[data-testid="session-row"][data-session-id="${origin.session_id}"]`).click()
    const conv = page.locator(`[data-testid="conversation"][data-session-id="${origin.session_id}"]`)
    const line = conv.getByTestId('delegations').getByTestId('delegation')
    await line.waitFor()
    assert.equal(await line.count(), 1)
    assert.equal(await line.innerText(), `delegated to pi: ${delegated.session_alias} (2/20 rounds)`)
    assert.equal(await conv.getByTestId('deleg-origin').count(), 0)
    await page.screenshot({ path: join(shots, 'delegation-origin.png') })

    // The tree shows the same line.
    await conv.getByTestId('tree-open').click()
    const treeLine = page.getByTestId('tree-delegations').getByTestId('delegation')
    await treeLine.waitFor()
    assert.equal(await treeLine.innerText(), `delegated to pi: ${delegated.session_alias} (2/20 rounds)`)
    await page.getByTestId('tree-close').click()
  })

  test('the delegated session links back to its origin', async () => {
    const conv = page.locator(`[data-testid="conversation"][data-session-id="${origin.session_id}"]`)
    await conv.getByTestId('delegation').click()
    const sub = page.locator(`[data-testid="conversation"][data-session-id="${delegated.session_id}"]`)
    await sub.waitFor()
    assert.match(await sub.getByTestId('conv-subject').innerText(), /sub T/)
    await sub.getByText('T is 42').waitFor()
    const back = sub.getByTestId('deleg-origin')
    assert.equal(await back.innerText(), `Delegated from ${origin.session_alias}`)
    await page.screenshot({ path: join(shots, 'delegation-delegated.png') })
    await back.click()
    await conv.waitFor()
  })

  test('the lines speak Chinese too', async () => {
    await page.getByTestId('lang-zh').click()
    const conv = page.locator(`[data-testid="conversation"][data-session-id="${origin.session_id}"]`)
    const line = conv.getByTestId('delegation')
    await page.waitForFunction((el) => el?.textContent?.startsWith('已委派给'), await line.elementHandle())
    assert.equal(await line.innerText(), `已委派给 pi：${delegated.session_alias}（2/20 轮）`)
    await line.click()
    const back = page.locator(`[data-testid="conversation"][data-session-id="${delegated.session_id}"]`).getByTestId('deleg-origin')
    await back.waitFor()
    assert.equal(await back.innerText(), `委派自 ${origin.session_alias}`)
    await page.getByTestId('lang-en').click()
  })
})
