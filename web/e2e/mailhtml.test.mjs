// Browser test: a mail body cannot cover or restyle the page. An agent sends
// the two payloads that used the page's own Tailwind classes (a link laid
// over the whole page, a white span painting a fake screen); in a real
// Chromium against a started `agentmail serve`, nothing of either mail may
// lie outside its card, and clicks outside the card never follow the mail's
// link. Independent of mailbox.test.mjs: its own gateway and data directory.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Api, Gateway, buildBinary, freePort, launchBrowser, screenshotDir, tempDir } from './harness.mjs'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-1'

let work, ws, gw, browser, context, page, phish, phishUrl
let phishHits = 0
let sessionId, linkMailId, screenMailId, sendScreen

before(async () => {
  work = tempDir('agentmail-e2e-html-')
  ws = tempDir('agentmail-ws-html-')
  gw = new Gateway({ bin: buildBinary(work), port: await freePort(), dataDir: join(work, 'data'), adminUser: ADMIN, adminPassword: PASSWORD })
  await gw.start()

  // The phishing target: counts every request that reaches it.
  phish = createServer((req, res) => {
    phishHits++
    res.end('phished')
  })
  await new Promise((r) => phish.listen(0, '127.0.0.1', r))
  phishUrl = `http://127.0.0.1:${phish.address().port}/phish`

  const admin = new Api(gw.url)
  await admin.login(ADMIN, PASSWORD)
  const key = await admin.post('/admin/agent-keys', { agent_name: 'pi', lifecycle: 'permanent', label: 'e2e-html' })
  const agent = new Api(gw.url, { bearer: key.key_token })
  await agent.post('/agent/register', { name: 'pi', platform: 'pi', workspaces: [{ name: 'work', path: ws }] })

  const sent = await admin.post('/me/mail/send', { to: `pi@${ws}.new`, subject: 'Run the tests', body: 'Please run the tests.', round_budget: 5 })
  sessionId = sent.session_id
  const inbox = await agent.get('/mail/inbox?status=unread&limit=5')
  const received = inbox.mails.find((m) => m.subject === 'Run the tests')
  assert.ok(received, 'the agent received the mail')
  const link = await agent.post('/mail/send', {
    to: ADMIN,
    subject: 'Re: Run the tests',
    body: `<a class="fixed inset-0 z-50" href="${phishUrl}"> </a>All tests pass.`,
    reply_to: received.mail_id,
  })
  linkMailId = link.mail_id
  sendScreen = async () => {
    const screen = await agent.post('/mail/send', {
      to: ADMIN,
      subject: 'Re: Run the tests',
      body: '<span class="fixed inset-0 z-50 bg-white">Session expired. Sign in again at the link below.</span>',
      reply_to: received.mail_id,
    })
    screenMailId = screen.mail_id
  }

  browser = await launchBrowser()
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' })
  page = await context.newPage()
  page.setDefaultTimeout(20000)
  page.on('pageerror', (e) => console.error('page error:', e.message))
  await page.goto(gw.url + '/')
  await page.getByLabel('Username').fill(ADMIN)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByTestId('nav-inbox').waitFor()
  await page.goto(`${gw.url}/inbox/${sessionId}`)
  await page.locator(`[data-testid="mail"][data-mail-id="${linkMailId}"]`).filter({ hasText: 'All tests pass.' }).waitFor()
})

after(async () => {
  await browser?.close()
  await gw?.stop()
  await new Promise((r) => (phish ? phish.close(r) : r()))
  if (work && !process.env.KEEP_E2E) rmSync(work, { recursive: true, force: true })
  if (ws) rmSync(ws, { recursive: true, force: true })
})

/** escapees lists the mail body's elements whose box is not inside the mail's card. */
function escapees(mailId) {
  return page.evaluate((id) => {
    const card = document.querySelector(`[data-testid="mail"][data-mail-id="${id}"]`)
    const c = card.getBoundingClientRect()
    const out = []
    for (const el of card.querySelectorAll('.md-body, .md-body *')) {
      const r = el.getBoundingClientRect()
      if (r.left < c.left - 0.5 || r.top < c.top - 0.5 || r.right > c.right + 0.5 || r.bottom > c.bottom + 0.5) {
        out.push(`${el.tagName.toLowerCase()} [${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)}] outside card [${Math.round(c.left)},${Math.round(c.top)} ${Math.round(c.width)}x${Math.round(c.height)}]`)
      }
    }
    return out
  }, mailId)
}

/**
 * outsidePoints are points of the page outside every mail card: the centre of
 * the session's subject line and of the page's top bar, and the viewport's
 * top-left corner.
 */
async function outsidePoints() {
  const pts = []
  for (const loc of [page.getByTestId('conv-subject'), page.locator('header').first()]) {
    const b = await loc.boundingBox()
    pts.push({ x: b.x + b.width / 2, y: b.y + b.height / 2 })
  }
  pts.push({ x: 3, y: 3 })
  const cards = await page.getByTestId('mail').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()))
  for (const p of pts) {
    for (const c of cards) assert.ok(!(p.x >= c.left && p.x <= c.right && p.y >= c.top && p.y <= c.bottom), `point ${p.x},${p.y} lies outside every card`)
  }
  return pts
}

/**
 * clickOutside clicks each point with the real mouse and reports, from a
 * capturing listener that sees the click before anything else, what was hit:
 * any element of a mail body, any link the click would follow.
 */
async function clickOutside() {
  await page.evaluate(() => {
    window.__clicks = []
    if (window.__clickSpy) return
    window.__clickSpy = true
    window.addEventListener(
      'click',
      (e) => {
        const t = e.target instanceof Element ? e.target : null
        const a = t?.closest('a')
        window.__clicks.push({ tag: t?.tagName.toLowerCase(), inMail: !!t?.closest('.md-body'), href: a ? a.href : null })
      },
      { capture: true },
    )
  })
  const pts = await outsidePoints()
  const hitInfo = []
  for (const p of pts) {
    hitInfo.push(await page.evaluate(({ x, y }) => {
      const t = document.elementFromPoint(x, y)
      return { tag: t?.tagName.toLowerCase(), inMail: !!t?.closest('.md-body') }
    }, p))
    await page.mouse.click(p.x, p.y)
  }
  const clicks = await page.evaluate(() => window.__clicks)
  assert.equal(clicks.length, pts.length, 'every click reached the page')
  return { pts, hitInfo, clicks }
}

/** assertClicksStayOnThePage clicks outside the cards and checks that no mail took the click. */
async function assertClicksStayOnThePage() {
  const { hitInfo, clicks } = await clickOutside()
  for (const h of hitInfo) assert.equal(h.inMail, false, `the topmost element at a point outside the cards is the page's, not the mail's (${h.tag})`)
  for (const c of clicks) {
    assert.notEqual(c.href, phishUrl, 'a click outside the card followed the phishing link')
    assert.equal(c.inMail, false, `a click outside the card hit the mail body (${c.tag})`)
  }
  assert.equal(context.pages().length, 1, 'no page was opened')
  assert.equal(phishHits, 0, 'the phishing server saw no request')
}

describe('mail HTML cannot cover the page', () => {
  test('a link laid over the page stays in its card; clicks outside never reach it', async () => {
    assert.deepEqual(await escapees(linkMailId), [], 'link payload')
    assert.equal(await page.locator('[data-testid="mail"] .md-body [class], [data-testid="mail"] .md-body [style], [data-testid="mail"] .md-body [id]').count(), 0, 'no class, style or id from the mail')
    await assertClicksStayOnThePage()
  })

  test('a fake screen arriving live stays in its card and covers nothing', async () => {
    await sendScreen()
    await page.locator(`[data-testid="mail"][data-mail-id="${screenMailId}"]`).filter({ hasText: 'Session expired' }).waitFor()
    await page.screenshot({ path: join(screenshotDir(), 'mailhtml-payloads-1280.png') })
    assert.deepEqual(await escapees(linkMailId), [], 'link payload')
    assert.deepEqual(await escapees(screenMailId), [], 'fake-screen payload')
    assert.equal(await page.locator('[data-testid="mail"] .md-body [class], [data-testid="mail"] .md-body [style], [data-testid="mail"] .md-body [id]').count(), 0, 'no class, style or id from the mail')
    await assertClicksStayOnThePage()
  })

  test('a mail body contains its content even if a page class got through', async () => {
    // Defence in depth: put the page's covering classes on the body's
    // elements directly, as a sanitiser gap would; the body's containment
    // must still keep them inside the card.
    await page.evaluate((ids) => {
      for (const id of ids) {
        for (const el of document.querySelectorAll(`[data-testid="mail"][data-mail-id="${id}"] .md-body *`)) el.className = 'fixed inset-0 z-50 bg-white'
      }
    }, [linkMailId, screenMailId])
    assert.ok((await page.locator('[data-testid="mail"] .md-body .fixed').count()) >= 2, 'the classes were applied')
    assert.deepEqual(await escapees(linkMailId), [], 'link payload with page classes')
    assert.deepEqual(await escapees(screenMailId), [], 'fake-screen payload with page classes')
    await assertClicksStayOnThePage()
  })
})
