// Browser tests of the web page against a really started `agentmail serve`
// with a fresh data directory (issue 5, "Done when"). Run with
//   npm --prefix web run test:e2e
// Needs Go (to build the binary, or $AGENTMAIL_BIN) and Debian's chromium
// (/usr/bin/chromium, or $CHROMIUM_PATH). Screenshots go to web/e2e/.out/screenshots
// ($SCREENSHOT_DIR; scripts/screenshots.sh writes docs/screenshots).
//
// The tests run in order and build on each other, like a person's session:
// log in, write to an agent, get its answer live, decide a permission...
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Api, Gateway, MAX_ATTACHMENT_BYTES, buildBinary, freePort, launchBrowser, screenshotDir, tempDir, waitFor } from './harness.mjs'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-1'
const WIDE = { width: 1280, height: 800 }
const NARROW = { width: 375, height: 812 }

let work, gw, browser, wide, page, admin, agent, ws, shots
let firstMailId, sessionId, permMailId

async function shot(p, name) {
  // Toasts come and go; they are not part of the screen being shown. They are
  // hidden for the picture only (removing React's nodes would break the page;
  // an injected style sheet is refused by the page's CSP, element styles are not).
  const toasts = (hide) =>
    p.evaluate((h) => document.querySelectorAll('[data-testid="toast"]').forEach((e) => (e.style.visibility = h ? 'hidden' : '')), hide)
  await toasts(true)
  await p.screenshot({ path: join(shots, name), fullPage: false, animations: 'disabled' })
  await toasts(false)
}

before(async () => {
  work = tempDir('agentmail-e2e-')
  const bin = buildBinary(work)
  gw = new Gateway({ bin, port: await freePort(), dataDir: join(work, 'data'), adminUser: ADMIN, adminPassword: PASSWORD })
  await gw.start()
  shots = screenshotDir()
  ws = tempDir('agentmail-ws-')

  // The admin issues an agent key; the agent registers with a workspace.
  admin = new Api(gw.url)
  await admin.login(ADMIN, PASSWORD)
  const key = await admin.post('/admin/agent-keys', { agent_name: 'pi', lifecycle: 'permanent', label: 'e2e' })
  assert.ok(key.key_token, 'issued agent key has a token')
  agent = new Api(gw.url, { bearer: key.key_token })
  await agent.post('/agent/register', { name: 'pi', platform: 'pi', workspaces: [{ name: 'work', path: ws }] })
  await agent.post('/agent/heartbeat', {
    models: [
      { provider: 'anthropic', model: 'claude-sonnet' },
      { provider: 'openai', model: 'gpt-small' },
    ],
  })

  browser = await launchBrowser()
  wide = await browser.newContext({ viewport: WIDE, locale: 'en-US', acceptDownloads: true })
  page = await wide.newPage()
  page.setDefaultTimeout(20000)
  page.on('pageerror', (e) => console.error('page error:', e.message))
})

after(async () => {
  await browser?.close()
  await gw?.stop()
  if (work && !process.env.KEEP_E2E) rmSync(work, { recursive: true, force: true })
  if (ws) rmSync(ws, { recursive: true, force: true })
})

describe('web page against a real gateway', () => {
  test('serves the real page with a CSP and no inline script', async () => {
    const res = await fetch(gw.url + '/')
    const html = await res.text()
    assert.match(html, /<div id="root">/)
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/)
    assert.equal(res.headers.get('cache-control'), 'no-cache')
    const asset = html.match(/src="(\/assets\/[^"]+\.js)"/)[1]
    const a = await fetch(gw.url + asset)
    assert.match(a.headers.get('cache-control') ?? '', /immutable/)
  })

  test('log in', async () => {
    await page.goto(gw.url + '/')
    await page.getByTestId('login-form').waitFor()
    await page.getByLabel('Username').fill(ADMIN)
    await page.getByLabel('Password').fill('wrong-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('login-error').waitFor()
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('nav-inbox').waitFor()
    await waitFor(async () => (await page.getByTestId('live-dot').getAttribute('data-state')) === 'open', { what: 'live stream open' })
    assert.equal(new URL(page.url()).pathname, '/inbox')
  })

  test('write to an agent address (unknown alias refused before sending)', async () => {
    await page.getByTestId('compose-open').click()
    const to = page.getByTestId('compose-to')
    // Autocomplete from the suggestion API.
    await to.fill('pi')
    await page.getByTestId('address-suggestions').waitFor()
    assert.match(await page.getByTestId('address-suggestions').innerText(), /pi/)
    // An unknown alias is an error before sending, never a new session.
    await to.fill(`pi@${ws}.no-such-alias`)
    await page.locator('[data-testid="address-preview"][data-tone="error"]').waitFor()
    assert.match(await page.getByTestId('address-preview').innerText(), /no-such-alias/)
    await page.getByTestId('compose-subject').fill('Should not go')
    await page.getByTestId('compose-send').click()
    await page.getByTestId('compose-error').waitFor()
    const before = await agent.get('/mail/inbox?status=all&limit=50&mark_read=false')
    assert.equal((before.mails ?? []).length, 0, 'nothing was sent to the unknown alias')

    await to.fill(`pi@${ws}.new`)
    await page.locator('[data-testid="address-preview"][data-tone="new"]').waitFor()
    await page.getByTestId('compose-subject').fill('Find the leak')
    await page.getByTestId('compose-budget').fill('2')
    await page.getByTestId('compose-body').fill('Please look at **main.go** and report.\n\n- memory\n- goroutines')
    await shot(page, 'compose-1280.png')
    await page.getByTestId('compose-send').click()
    await page.getByTestId('compose').waitFor({ state: 'detached' })
    await page.getByTestId('conversation').waitFor()
    assert.equal(await page.getByTestId('conv-subject').innerText(), 'Find the leak')
    sessionId = await page.getByTestId('conversation').getAttribute('data-session-id')

    const inbox = await agent.get('/mail/inbox?status=unread&limit=5')
    assert.equal(inbox.mails.length, 1)
    assert.equal(inbox.mails[0].subject, 'Find the leak')
    firstMailId = inbox.mails[0].mail_id
  })

  test("an agent's reply arrives live", async () => {
    const mails = () => page.getByTestId('mail')
    assert.equal(await mails().count(), 1)
    await agent.post('/mail/send', {
      to: ADMIN,
      subject: 'Re: Find the leak',
      body: 'Found it in `main.go`:\n\n```go\nfor { go work() }\n```\n\n<script>document.title="pwned"</script>',
      reply_to: firstMailId,
    })
    await page.getByTestId('mail').filter({ hasText: 'Found it in' }).waitFor()
    assert.equal(await mails().count(), 2)
    assert.notEqual(await page.title(), 'pwned')
    assert.equal(await page.locator('[data-testid="mail"] script').count(), 0)
  })

  test('approve a permission request and the card changes', async () => {
    const perm = await agent.post('/permission/request', {
      question: 'May I run `rm -rf build/`?',
      session_id: sessionId,
      relay_key: 'e2e-perm-1',
      tool: 'Bash',
      tool_input: { command: 'rm -rf build/' },
      context: 'rm -rf build/',
    })
    permMailId = perm.mail_id
    const card = page.getByTestId('conversation').locator(`[data-testid="permission-card"][data-mail-id="${permMailId}"]`)
    await card.waitFor()
    assert.equal(await card.getAttribute('data-status'), 'pending')
    // The "waiting for you" count follows.
    await page.getByTestId('nav-waiting').filter({ hasText: '1' }).waitFor()
    await shot(page, 'permission-1280.png')
    // It is listed under "waiting for you" with its count.
    await page.getByTestId('nav-waiting').click()
    await page.locator(`[data-testid="waiting-list"] [data-mail-id="${permMailId}"]`).waitFor()
    assert.match(await page.getByTestId('waiting-count').innerText(), /: 1$/)
    await shot(page, 'waiting-1280.png')
    await page.goBack()
    await waitFor(() => new URL(page.url()).pathname.startsWith('/inbox/'), { what: 'back in the conversation' })
    await page.getByTestId('conversation').waitFor()
    await card.waitFor()
    await card.getByRole('button', { name: 'Approve' }).click()
    await page.getByTestId('conversation').locator(`[data-testid="permission-card"][data-mail-id="${permMailId}"][data-status="approved"]`).waitFor()
    assert.match(await card.getByTestId('permission-decided').innerText(), /admin/)
    const p = await agent.get(`/permission/${permMailId}`)
    assert.equal(p.status, 'approved')
    await shot(page, 'conversation-1280.png')
  })

  test('switch list and card views (kept across reloads)', async () => {
    await page.getByTestId('view-list').click()
    await page.locator('[data-testid="mail-list"][data-view="list"]').waitFor()
    await page.getByTestId('session-row').first().waitFor()
    await shot(page, 'inbox-list-1280.png')
    await page.getByTestId('view-cards').click()
    await page.locator('[data-testid="mail-list"][data-view="cards"]').waitFor()
    const card = page.locator(`[data-testid="session-card"][data-session-id="${sessionId}"]`)
    await card.waitFor()
    // Budget 2, one agent mail used a round → one left → orange.
    assert.equal(await card.getByTestId('budget-badge').getAttribute('data-tone'), 'last')
    await shot(page, 'inbox-cards-1280.png')
    await page.reload()
    await page.locator('[data-testid="mail-list"][data-view="cards"]').waitFor()
  })

  test('edit the budget from the badge and reset the used count', async () => {
    const badge = page.getByTestId('conversation').getByTestId('budget-badge')
    await badge.click()
    await page.getByTestId('budget-editor').waitFor()
    await page.getByLabel('Rounds allowed (0 = unlimited)').fill('5')
    await page.getByRole('button', { name: 'Set budget' }).click()
    await waitFor(async () => (await badge.innerText()) === '1/5', { what: 'badge 1/5' })
    assert.equal(await badge.getAttribute('data-tone'), 'normal')
    await badge.click()
    await page.getByRole('button', { name: 'Reset used rounds to 0' }).click()
    await waitFor(async () => (await badge.innerText()) === '0/5', { what: 'badge 0/5' })
  })

  test('open the conversation tree, loading earlier mails on scroll', async () => {
    await page.getByTestId('tree-open').click()
    await page.getByTestId('tree').waitFor()
    await waitFor(async () => (await page.getByTestId('tree-node').count()) >= 2, { what: 'tree nodes' })
    assert.equal(await page.locator('[data-testid="tree-node"][data-focus="true"]').count(), 1)
    await shot(page, 'tree-1280.png')
    await page.getByTestId('tree-close').click()
    await page.getByTestId('conv-scroll').waitFor()

    // A long thread: the nodes near the mail come first, earlier ones on scrolling up.
    let sent = await admin.post('/me/mail/send', { to: `pi@${ws}.new`, subject: 'Long thread', body: 'message 0' })
    const longSession = sent.session_id
    for (let i = 1; i <= 30; i++) {
      sent = await admin.post('/me/mail/send', { to: `pi@${ws}`, subject: 'Long thread', body: `message ${i}`, reply_to: sent.mail_id })
    }
    assert.equal(sent.session_id, longSession, 'replies stay in the session')
    await page.goto(`${gw.url}/inbox/${longSession}?tree=${sent.mail_id}`)
    await page.getByTestId('tree').waitFor()
    await page.getByTestId('tree-node').first().waitFor()
    const firstCount = await page.getByTestId('tree-node').count()
    assert.ok(firstCount < 31, `first page is partial (${firstCount} of 31)`)
    assert.equal(await page.locator('[data-testid="tree-node"][data-focus="true"]').count(), 1)
    await page.getByTestId('tree').evaluate((el) => (el.scrollTop = 0))
    await waitFor(async () => (await page.getByTestId('tree-node').count()) === 31, { what: 'all 31 nodes after scrolling up' })
    await page.goto(`${gw.url}/inbox/${sessionId}`)
    await page.getByTestId('conversation').waitFor()
  })

  test('upload and download an attachment', async () => {
    const content = 'leak report\nline 2 ✓\n'
    await page.getByTestId('action-reply').click()
    await page.getByTestId('compose').waitFor()
    assert.notEqual(await page.getByTestId('compose-to').inputValue(), '')
    await page.getByTestId('compose-file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(content) })
    await page.locator('[data-testid="compose-attachments"] li[data-state="done"]').waitFor()
    await page.getByTestId('compose-body').fill('Here are my notes.')
    await page.getByTestId('compose-send').click()
    await page.getByTestId('compose').waitFor({ state: 'detached' })
    const link = page.getByTestId('attachment-link').filter({ hasText: 'notes.txt' })
    await link.waitFor()
    const [dl] = await Promise.all([page.waitForEvent('download'), link.click()])
    assert.equal(dl.suggestedFilename(), 'notes.txt')
    assert.equal(readFileSync(await dl.path(), 'utf8'), content)
    // The agent receives the same bytes.
    const inbox = await agent.get('/mail/inbox?status=unread&limit=5')
    const withFile = inbox.mails.find((m) => (m.attachments ?? []).length > 0)
    assert.ok(withFile, 'agent got the mail with the attachment')
    const res = await agent.get(`/attachments/${withFile.attachments[0].attachment_id}`, { raw: true })
    assert.equal(await res.text(), content)
  })

  test('keyboard flow', async () => {
    // A second request to decide with the keyboard.
    const perm2 = await agent.post('/permission/request', {
      question: 'May I push to main?',
      session_id: sessionId,
      relay_key: 'e2e-perm-2',
      tool: 'Bash',
      tool_input: { command: 'git push' },
    })
    await page.goto(gw.url + '/inbox')
    await page.getByTestId('mail-list').waitFor()
    await page.locator('body').click({ position: { x: 5, y: 300 } })
    await page.keyboard.press('?')
    await page.getByTestId('help').waitFor()
    await shot(page, 'shortcuts-1280.png')
    await page.keyboard.press('Escape')
    await page.getByTestId('help').waitFor({ state: 'detached' })
    await page.keyboard.press('j')
    await page.keyboard.press('o')
    await page.getByTestId('conversation').waitFor()
    assert.match(new URL(page.url()).pathname, /^\/inbox\/.+/)
    const card = page.locator(`[data-testid="permission-card"][data-mail-id="${perm2.mail_id}"]`)
    await card.waitFor()
    await page.keyboard.press('n')
    await page.locator(`[data-testid="permission-card"][data-mail-id="${perm2.mail_id}"][data-status="denied"]`).waitFor()
    assert.equal((await agent.get(`/permission/${perm2.mail_id}`)).status, 'denied')
    await page.keyboard.press('r')
    await page.getByTestId('compose').waitFor()
    await page.keyboard.press('Escape')
    await page.getByTestId('compose').waitFor({ state: 'detached' })
    await page.keyboard.press('/')
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'list-filter')
    await page.keyboard.press('Escape')
    // Shift+U marks the conversation unread and goes back to the list; Shift+I marks it read.
    const row = page.locator(`[data-session-id="${sessionId}"]`).first()
    await page.keyboard.press('Shift+U')
    await waitFor(() => new URL(page.url()).pathname === '/inbox', { what: 'back to the list' })
    await waitFor(async () => (await row.getAttribute('data-unread')) === 'true', { what: 'marked unread' })
    await page.keyboard.press('Shift+I')
    await waitFor(async () => (await row.getAttribute('data-unread')) === 'false', { what: 'marked read' })
    await page.keyboard.press('o')
    await page.getByTestId('conversation').waitFor()
    await page.keyboard.press('u')
    await waitFor(() => new URL(page.url()).pathname === '/inbox', { what: 'back to the list' })
    await page.keyboard.press('c')
    await page.getByTestId('compose').waitFor()
    await page.keyboard.press('Escape')
  })

  test('narrow screen flow at 375 px', async () => {
    // More conversations, so the list scrolls.
    for (let i = 0; i < 14; i++) {
      await admin.post('/me/mail/send', { to: `pi@${ws}.new`, subject: `Task ${i + 1}`, body: `Item ${i + 1}` })
    }
    // Wide screens have no narrow-only controls in the DOM at all.
    assert.equal(await page.getByTestId('drawer-open').count(), 0)
    assert.equal(await page.getByTestId('conv-back').count(), 0)

    const ctx = await browser.newContext({ viewport: NARROW, locale: 'en-US', storageState: await wide.storageState(), hasTouch: true, isMobile: true })
    const p = await ctx.newPage()
    p.setDefaultTimeout(20000)
    await p.goto(gw.url + '/inbox')
    await p.getByTestId('mail-list').waitFor()
    await p.getByTestId('bottom-bar').waitFor()
    const panel = p.getByTestId('conversation-panel')
    assert.equal(await panel.getAttribute('data-open'), 'false')
    await waitFor(async () => (await p.locator('[data-testid="mail-list"] > li').count()) >= 15, { what: '15 conversations' })
    await shot(p, 'inbox-375.png')

    // The list fills the screen.
    const listBox = await p.getByTestId('list-scroll').boundingBox()
    assert.ok(listBox.width >= 370, `list width ${listBox.width}`)

    const scroller = p.getByTestId('list-scroll')
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight))
    const scrolled = await scroller.evaluate((el) => el.scrollTop)
    assert.ok(scrolled > 0, 'the list scrolls')
    const last = p.locator('[data-testid="mail-list"] > li').last()
    const lastKey = await last.getAttribute('data-key')
    await last.locator('button').first().click()
    await waitFor(async () => (await panel.getAttribute('data-open')) === 'true', { what: 'panel open' })
    await waitFor(async () => Math.abs((await panel.boundingBox()).x) < 1, { what: 'panel slid in' })
    await p.getByTestId('conversation').waitFor()
    await shot(p, 'conversation-375.png')

    await p.getByTestId('conv-back').click()
    await waitFor(async () => (await panel.getAttribute('data-open')) === 'false', { what: 'panel closed' })
    await waitFor(async () => (await panel.boundingBox()).x >= 370, { what: 'panel slid out' })
    // The list stayed mounted: scroll position and selection are kept.
    assert.equal(await scroller.evaluate((el) => el.scrollTop), scrolled)
    const selected = p.locator(`[data-testid="mail-list"] > li[data-key="${lastKey}"] button`)
    assert.match((await selected.getAttribute('class')) ?? '', /border-blue-600/)

    // Navigation is a drawer plus a bottom bar.
    await p.getByTestId('drawer-open').click()
    await p.getByTestId('drawer').waitFor()
    await shot(p, 'drawer-375.png')
    await p.getByTestId('drawer').getByTestId('nav-waiting').click()
    await p.getByTestId('drawer').waitFor({ state: 'detached' })
    await waitFor(() => new URL(p.url()).pathname === '/waiting', { what: 'waiting page' })
    await p.getByTestId('bottom-inbox').click()
    await p.getByTestId('mail-list').waitFor()
    // Compose fills the narrow screen.
    await p.getByTestId('bottom-bar').getByTestId('compose-open').click()
    await p.getByTestId('compose').waitFor()
    const box = await p.getByTestId('compose').boundingBox()
    assert.ok(box.width >= 370, `compose width ${box.width}`)
    await shot(p, 'compose-375.png')
    await ctx.close()
  })

  test('agents page and admin pages', async () => {
    await page.getByTestId('nav-agents').click()
    await page.getByTestId('agent-card').filter({ hasText: 'pi' }).click()
    await page.getByTestId('agent-detail').waitFor()
    await page.getByTestId('agent-sessions').waitFor()
    await shot(page, 'agents-1280.png')

    await page.goto(gw.url + '/admin/users')
    await page.getByLabel('Username').fill('bob')
    await page.getByLabel('Password').fill('bob-password-1')
    await page.getByRole('button', { name: 'Create user' }).click()
    await page.getByTestId('users-table').getByText('bob', { exact: true }).waitFor()
    await new Api(gw.url).login('bob', 'bob-password-1')
    await shot(page, 'admin-users-1280.png')

    // The README's "Admin → Agent keys → issue" is the page's own wording.
    await page.getByTestId('nav-admin').click()
    await page.getByRole('link', { name: 'Agent keys', exact: true }).click()
    await waitFor(() => new URL(page.url()).pathname === '/admin/agent-keys', { what: '/admin/agent-keys' })
    await page.getByLabel('Issue a new key').check()
    await page.getByTestId('agent-key-name').fill('dsh')
    await page.getByTestId('agent-key-create').click()
    const token = await page.getByTestId('agent-key-token').innerText()
    assert.ok(token.length > 10, 'the issued token is shown once')
    const dsh = new Api(gw.url, { bearer: token })
    await dsh.post('/agent/register', { name: 'dsh', platform: 'dsh', workspaces: [{ name: 'w', path: ws }] })
    await shot(page, 'admin-keys-1280.png')
    await page.reload()
    await page.getByTestId('agent-keys').waitFor()
    assert.equal(await page.getByTestId('agent-key-token').count(), 0, 'never shown again')

    // Revoking asks first and names the agent that disconnects.
    const dshRow = page.locator('[data-testid="agent-keys"] tr[data-owner="dsh"]')
    const dshKeyActive = async () => ((await admin.get('/admin/agent-keys')).keys ?? []).find((k) => k.owner === 'dsh')?.active
    await dshRow.getByTestId('key-revoke').click()
    const ask = page.getByTestId('revoke-confirm')
    await ask.waitFor()
    assert.match(await page.getByTestId('revoke-confirm-message').innerText(), /agent dsh .*disconnects/)
    await ask.getByTestId('revoke-cancel').click()
    await ask.waitFor({ state: 'detached' })
    assert.equal(await dshKeyActive(), true, 'cancel keeps the key')
    await dshRow.getByTestId('key-revoke').click()
    await shot(page, 'revoke-key-1280.png')
    await page.getByTestId('revoke-do').click()
    await waitFor(async () => (await dshKeyActive()) === false, { what: 'dsh key revoked' })
    await dsh.get('/mail/inbox', { expect: 401 })
    // The old address of the keys page still leads there; user keys have their own tab.
    await page.goto(gw.url + '/admin/keys')
    await page.getByTestId('agent-key-form').waitFor()
    await page.getByRole('link', { name: 'User keys', exact: true }).click()
    await waitFor(() => new URL(page.url()).pathname === '/admin/user-keys', { what: '/admin/user-keys' })
    await page.getByRole('link', { name: 'Agents & models', exact: true }).waitFor()

    await page.goto(gw.url + '/admin/agents')
    await page.getByTestId('admin-agents').waitFor()
    await page.getByTestId('default-rounds-pi').fill('7')
    await page.getByTestId('default-rounds-pi').press('Enter')
    await waitFor(async () => (await admin.get('/admin/agents')).agents.find((a) => a.name === 'pi')?.default_rounds === 7, { what: 'default rounds saved' })
    const piRow = page.locator('li').filter({ has: page.getByTestId('default-rounds-pi') })
    await piRow.getByRole('button', { name: 'Edit allowed models' }).click()
    const ed = page.getByTestId('models-editor')
    await ed.waitFor()
    const unr = ed.getByRole('checkbox')
    if (await unr.isChecked()) await unr.uncheck()
    await ed.getByRole('button', { name: '+ anthropic/claude-sonnet' }).click()
    await ed.getByRole('button', { name: '+ openai/gpt-small' }).click()
    await ed.getByRole('button', { name: 'Move openai/gpt-small up' }).click()
    await ed.getByRole('button', { name: 'Save' }).click()
    await waitFor(async () => {
      const m = await admin.get('/admin/agents/pi/models')
      return (m.allowed_models ?? []).map((x) => x.model).join(',') === 'gpt-small,claude-sonnet'
    }, { what: 'allowed models in order' })
    await shot(page, 'admin-agents-1280.png')

    await page.goto(gw.url + '/account')
    await page.getByTestId('key-label').fill('laptop')
    await page.getByTestId('key-create').click()
    const userToken = await page.getByTestId('key-token').innerText()
    const laptop = new Api(gw.url, { bearer: userToken })
    const me = await laptop.get('/me')
    assert.equal(me.username, ADMIN)

    // An always-allow grant to revoke.
    const perm = await agent.post('/permission/request', {
      question: 'May I run the tests?',
      session_id: sessionId,
      relay_key: 'e2e-perm-grant',
      tool: 'Bash',
      tool_input: { command: 'go test ./...' },
    })
    await admin.post(`/me/permission/${perm.mail_id}/decide`, { decision: 'always' })
    await page.reload()
    await page.getByTestId('grant-revoke').waitFor()
    await shot(page, 'account-1280.png')

    // Revoking the client key asks first.
    await page.locator('[data-testid="my-keys"] tr').filter({ hasText: 'laptop' }).getByTestId('key-revoke').click()
    assert.match(await page.getByTestId('revoke-confirm-message').innerText(), /stops working/)
    await page.getByTestId('revoke-do').click()
    await waitFor(async () => (await fetch(gw.url + '/api/v1/me', { headers: { Authorization: `Bearer ${userToken}` } })).status === 401, { what: 'laptop key revoked' })

    // So does revoking a grant, naming the agent and the tool.
    const grants = async () => (await admin.get('/me/grants')).grants ?? []
    assert.equal((await grants()).length, 1)
    await page.getByTestId('grant-revoke').click()
    const msg = await page.getByTestId('revoke-confirm-message').innerText()
    assert.match(msg, /pi/)
    assert.match(msg, /Bash/)
    await page.getByTestId('revoke-cancel').click()
    assert.equal((await grants()).length, 1, 'cancel keeps the grant')
    await page.getByTestId('grant-revoke').click()
    await page.getByTestId('revoke-do').click()
    await waitFor(async () => (await grants()).length === 0, { what: 'grant revoked' })
  })

  test('a person changes their own password', async () => {
    const ctx = await browser.newContext({ viewport: WIDE, locale: 'en-US' })
    const p = await ctx.newPage()
    p.setDefaultTimeout(20000)
    await p.goto(gw.url + '/')
    await p.getByLabel('Username').fill('bob')
    await p.getByLabel('Password').fill('bob-password-1')
    await p.getByRole('button', { name: 'Sign in' }).click()
    await p.getByTestId('nav-account').click()
    const form = p.getByTestId('password-form')
    await form.waitFor()
    // A wrong current password is named on its field.
    await form.getByLabel('Current password').fill('not-my-password')
    await form.getByLabel('New password', { exact: true }).fill('bob-password-2')
    await form.getByLabel('New password again').fill('bob-password-2')
    await form.getByRole('button', { name: 'Change password' }).click()
    await form.getByText('That is not your current password.').waitFor()
    // The right one changes it; this page stays signed in.
    await form.getByLabel('Current password').fill('bob-password-1')
    await form.getByRole('button', { name: 'Change password' }).click()
    await waitFor(async () => (await form.getByLabel('Current password').inputValue()) === '', { what: 'form cleared after the change' })
    await new Api(gw.url).login('bob', 'bob-password-2')
    await assert.rejects(new Api(gw.url).login('bob', 'bob-password-1'), /401/)
    await p.getByTestId('nav-inbox').click()
    await p.getByTestId('mail-list').or(p.getByText('No conversations yet')).first().waitFor()
    assert.equal(await p.getByTestId('login-form').count(), 0, 'still signed in')
    await ctx.close()
  })

  test('switch language', async () => {
    await page.goto(gw.url + '/inbox')
    await page.getByTestId('lang-zh').click()
    await page.getByTestId('nav-inbox').filter({ hasText: '收件箱' }).waitFor()
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN')
    await page.reload()
    await page.getByTestId('nav-inbox').filter({ hasText: '收件箱' }).waitFor()
    await page.locator(`[data-testid="session-card"][data-session-id="${sessionId}"]`).click()
    await page.getByTestId('conversation').waitFor()
    await shot(page, 'conversation-zh-1280.png')
    await page.getByTestId('lang-en').click()
    await page.getByTestId('nav-inbox').filter({ hasText: 'Inbox' }).waitFor()
  })

  /** countSends counts the page's POST /me/mail/send calls while fn runs. */
  async function countSends(fn) {
    let n = 0
    const on = (req) => {
      if (req.method() === 'POST' && new URL(req.url()).pathname === '/api/v1/me/mail/send') n++
    }
    page.on('request', on)
    try {
      await fn()
    } finally {
      page.off('request', on)
    }
    return n
  }

  /** openCompose opens a new mail to a new session of pi with the address checked. */
  async function openCompose(subject) {
    await page.goto(gw.url + '/inbox')
    await page.getByTestId('mail-list').waitFor()
    await page.getByTestId('compose-open').click()
    await page.getByTestId('compose-to').fill(`pi@${ws}.new`)
    await page.locator('[data-testid="address-preview"][data-tone="new"]').waitFor()
    await page.getByTestId('compose-subject').fill(subject)
    await page.getByTestId('compose-body').fill(`Body of ${subject}`)
  }

  async function agentMailsWith(subject) {
    const r = await agent.get('/mail/inbox?status=all&limit=200&mark_read=false')
    return (r.mails ?? []).filter((m) => m.subject === subject)
  }

  test('two quick Ctrl+Enter send one mail', async () => {
    await openCompose('Only once')
    const sends = await countSends(async () => {
      // Two presses within one task: the second comes before any answer.
      await page.getByTestId('compose-body').evaluate((el) => {
        for (let i = 0; i < 2; i++) el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', ctrlKey: true, bubbles: true, cancelable: true }))
      })
      await page.getByTestId('compose').waitFor({ state: 'detached' })
      await page.getByTestId('conversation').waitFor()
    })
    assert.equal(sends, 1, 'one send request')
    await waitFor(async () => (await agentMailsWith('Only once')).length === 1, { what: 'the agent got the mail' })
    const sessions = (await admin.get('/me/sessions?limit=200')).sessions.filter((x) => x.subject === 'Only once')
    assert.equal(sessions.length, 1, 'one session')
  })

  test('a file over the size limit: said once, in one unit, no futile retry, sent once removed', async () => {
    await openCompose('With a big file')
    const big = Buffer.alloc(MAX_ATTACHMENT_BYTES + 4096, 'x')
    await page.getByTestId('compose-file').setInputFiles({ name: 'big.log', mimeType: 'text/plain', buffer: big })
    const chip = page.locator('[data-testid="compose-attachments"] li').filter({ hasText: 'big.log' })
    await page.locator('[data-testid="compose-attachments"] li[data-state="error"]').waitFor()
    const sends = await countSends(async () => {
      await page.getByTestId('compose-body').press('Control+Enter')
      await page.getByTestId('compose-send').click()
    })
    assert.equal(sends, 0, 'nothing was sent without the attachment')
    assert.equal(await page.getByTestId('compose').count(), 1, 'the form stays open')
    // Why, on the file; what blocks sending, once, beside Send.
    assert.match(await chip.innerText(), /larger than the limit of 1 MiB/)
    assert.match(await page.getByTestId('compose-upload-block').innerText(), /^Too large to send: big\.log\. Remove/)
    assert.equal(await page.getByTestId('compose-error').count(), 0, 'the same message is not repeated above Send')
    const form = await page.getByTestId('compose').innerText()
    assert.doesNotMatch(form, /bytes/, 'sizes in one unit (MiB), not bytes')
    assert.equal((form.match(/Too large to send/g) ?? []).length, 1)
    // A retry cannot make the file smaller: none is offered.
    assert.equal(await chip.getByTestId('upload-retry').count(), 0, 'no retry for a file over the limit')
    await chip.getByTestId('upload-remove').click()
    await page.getByTestId('compose-body').press('Control+Enter')
    await page.getByTestId('compose').waitFor({ state: 'detached' })
    await waitFor(async () => (await agentMailsWith('With a big file')).length === 1, { what: 'sent without the removed file' })
  })

  test('a request that cannot reach the gateway shows the banner, not "Failed to fetch"', async () => {
    await page.goto(gw.url + '/inbox')
    await page.getByTestId('mail-list').waitFor()
    await waitFor(async () => (await page.getByTestId('live-dot').getAttribute('data-state')) === 'open', { what: 'live' })
    // The event stream stays up; only the list request fails as without a network.
    const sent = (url) => new URL(url).pathname === '/api/v1/me/mail/sent'
    await page.route(sent, (route) => route.abort('internetdisconnected'))
    await page.getByTestId('nav-sent').click()
    const box = page.getByTestId('error-box')
    await box.waitFor()
    assert.equal((await box.locator('p').first().innerText()).trim(), 'Cannot reach the gateway — retrying')
    await page.getByTestId('live-banner').filter({ hasText: 'Cannot reach the gateway — retrying' }).waitFor()
    assert.doesNotMatch(await page.locator('body').innerText(), /Failed to fetch/)
    // Chinese too.
    await page.getByTestId('lang-zh').click()
    await page.getByTestId('error-box').filter({ hasText: '无法连接网关——正在重试' }).waitFor()
    await page.getByTestId('lang-en').click()
    // Once requests get through again, the page retries by itself.
    await page.unroute(sent)
    await page.getByTestId('mail-list').waitFor({ timeout: 30000 })
    await page.getByTestId('live-banner').waitFor({ state: 'detached', timeout: 30000 })
  })

  test('a lost connection shows a banner and resumes', async () => {
    await page.goto(gw.url + `/inbox/${sessionId}`)
    await page.getByTestId('conversation').waitFor()
    await waitFor(async () => (await page.getByTestId('live-dot').getAttribute('data-state')) === 'open', { what: 'live' })
    await gw.stop()
    await page.getByTestId('live-banner').waitFor()
    // A request made meanwhile says the same, not the browser's "Failed to fetch".
    await page.getByTestId('nav-agents').click()
    await page.getByTestId('error-box').filter({ hasText: 'Cannot reach the gateway — retrying' }).waitFor()
    assert.doesNotMatch(await page.locator('body').innerText(), /Failed to fetch/)
    await page.goBack()
    await gw.start()
    await page.getByTestId('live-banner').waitFor({ state: 'detached', timeout: 60000 })
    await agent.post('/mail/send', { to: ADMIN, subject: 'Re: Find the leak', body: 'Back after the restart.', reply_to: firstMailId })
    await page.getByTestId('mail').filter({ hasText: 'Back after the restart.' }).waitFor()
  })
})
