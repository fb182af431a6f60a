// Test harness for the browser tests: builds and starts a real
// `agentmail serve` on a free loopback port with a fresh data directory,
// talks to it as an admin and as an agent over the public API, and launches
// Debian's Chromium through playwright-core (no browser download).
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Flags Chromium needs on this closed network, as root, without a GPU. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
]

/** MAX_ATTACHMENT_BYTES is the attachment size limit of the started gateway (1 MiB). */
export const MAX_ATTACHMENT_BYTES = 1 << 20

/** freePort asks the kernel for an unused loopback port. */
export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer()
    s.unref()
    s.on('error', rej)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => res(port))
    })
  })
}

/** waitFor polls fn until it returns a truthy value or the deadline passes. */
export async function waitFor(fn, { timeout = 30000, interval = 100, what = 'condition' } = {}) {
  const end = Date.now() + timeout
  let last
  for (;;) {
    try {
      const v = await fn()
      if (v) return v
    } catch (e) {
      last = e
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`)
    await new Promise((r) => setTimeout(r, interval))
  }
}

/** buildBinary builds cmd/agentmail once (or uses $AGENTMAIL_BIN). */
export function buildBinary(outDir) {
  if (process.env.AGENTMAIL_BIN) return process.env.AGENTMAIL_BIN
  const out = join(outDir, 'agentmail')
  execFileSync('go', ['build', '-o', out, './cmd/agentmail'], { cwd: repoRoot, stdio: 'inherit' })
  return out
}

/**
 * Gateway is one started `agentmail serve`. stop() ends it (SIGTERM, then
 * SIGKILL after a grace period); start() starts it again on the same port and
 * data directory.
 */
export class Gateway {
  /** wrap, when set, is a command line the gateway is started under (e.g. unshare with a small tmpfs), the binary and its arguments appended. */
  constructor({ bin, port, dataDir, adminUser, adminPassword, wrap }) {
    Object.assign(this, { bin, port, dataDir, adminUser, adminPassword, wrap })
    this.url = `http://127.0.0.1:${port}`
    this.proc = null
    this.log = []
  }

  async start() {
    const env = {
      ...process.env,
      AGENTMAIL_ADDR: `127.0.0.1:${this.port}`,
      AGENTMAIL_DATA_DIR: this.dataDir,
      ADMIN_USER: this.adminUser,
      ADMIN_PASSWORD: this.adminPassword,
      DATABASE_URL: '',
      // Small enough for a test to go over it without a huge upload.
      AGENTMAIL_MAX_ATTACHMENT_BYTES: String(MAX_ATTACHMENT_BYTES),
    }
    const argv = [...(this.wrap ?? []), this.bin, 'serve']
    this.proc = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] })
    const keep = (b) => {
      this.log.push(b.toString())
      if (this.log.length > 400) this.log.splice(0, 100)
    }
    this.proc.stdout.on('data', keep)
    this.proc.stderr.on('data', keep)
    const exited = new Promise((r) => this.proc.once('exit', (code) => r(code)))
    this.exited = exited
    await Promise.race([
      waitFor(async () => (await fetch(`${this.url}/healthz`)).ok, { timeout: 60000, what: 'gateway /healthz' }),
      exited.then((code) => {
        throw new Error(`agentmail serve exited with ${code}:\n${this.log.join('')}`)
      }),
    ])
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return
    this.proc.kill('SIGTERM')
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 15000)
    await this.exited
    clearTimeout(t)
  }
}

/** Api is a small JSON client: a person by cookie + CSRF token, or anyone by Bearer key. */
export class Api {
  constructor(base, { bearer } = {}) {
    this.base = base + '/api/v1'
    this.bearer = bearer
    this.cookie = ''
    this.csrf = ''
  }

  async login(username, password) {
    const res = await fetch(`${this.base}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username, password }),
    })
    if (!res.ok) throw new Error(`login ${res.status}: ${await res.text()}`)
    const set = res.headers.getSetCookie?.() ?? [res.headers.get('set-cookie') ?? '']
    this.cookie = set.map((c) => c.split(';')[0]).join('; ')
    const body = await res.json()
    this.csrf = body.csrf_token
    return body
  }

  async call(method, path, body, { raw = false, expect } = {}) {
    const headers = {}
    if (this.bearer) headers.Authorization = `Bearer ${this.bearer}`
    if (this.cookie) headers.Cookie = this.cookie
    if (this.csrf && method !== 'GET') headers['X-CSRF-Token'] = this.csrf
    let payload
    if (body instanceof FormData) payload = body
    else if (body !== undefined) {
      headers['Content-Type'] = 'application/json'
      payload = JSON.stringify(body)
    }
    const res = await fetch(this.base + path, { method, headers, body: payload })
    if (expect !== undefined ? res.status !== expect : !res.ok) {
      throw new Error(`${method} ${path} → ${res.status}: ${await res.text()}`)
    }
    if (raw) return res
    if (res.status === 204) return undefined
    return res.json()
  }

  get(p, o) {
    return this.call('GET', p, undefined, o)
  }
  post(p, b, o) {
    return this.call('POST', p, b, o)
  }
  put(p, b, o) {
    return this.call('PUT', p, b, o)
  }
  patch(p, b, o) {
    return this.call('PATCH', p, b, o)
  }
}

/** tempDir makes a fresh directory under the system temp folder. */
export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** launchBrowser starts Debian's Chromium (or $CHROMIUM_PATH). */
export async function launchBrowser() {
  const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
  if (!existsSync(executablePath)) throw new Error(`no Chromium at ${executablePath}: apt-get install chromium`)
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS })
}

/**
 * screenshotDir is where the main screens are saved: $SCREENSHOT_DIR, or the
 * ignored folder web/e2e/.out/screenshots, so a test run never rewrites the
 * committed pictures (scripts/screenshots.sh refreshes docs/screenshots).
 */
export function screenshotDir() {
  const dir = process.env.SCREENSHOT_DIR || join(repoRoot, 'web', 'e2e', '.out', 'screenshots')
  mkdirSync(dir, { recursive: true })
  return dir
}

/**
 * signedInPage opens a 1280x800 English page of the gateway at url in
 * browser and signs in as username; page errors are printed.
 */
export async function signedInPage(browser, url, username, password) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' })
  const page = await ctx.newPage()
  page.setDefaultTimeout(20000)
  page.on('pageerror', (e) => console.error('page error:', e.message))
  await page.goto(url + '/')
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByTestId('nav-inbox').waitFor()
  return page
}

/**
 * startWithAgent builds the binary, starts a gateway over a fresh data
 * directory (folders named after prefix), signs the admin in over the API
 * and registers the agent agentName with a new workspace folder. It answers
 * { work, ws, gw, admin, agent }: the scratch folder, the workspace, the
 * started Gateway, and Api clients for the admin and the agent.
 */
export async function startWithAgent(prefix, adminUser, adminPassword, agentName) {
  const work = tempDir(`agentmail-e2e-${prefix}-`)
  const ws = tempDir(`agentmail-ws-${prefix}-`)
  const bin = buildBinary(work)
  const gw = new Gateway({ bin, port: await freePort(), dataDir: join(work, 'data'), adminUser, adminPassword })
  await gw.start()
  const admin = new Api(gw.url)
  await admin.login(adminUser, adminPassword)
  const key = await admin.post('/admin/agent-keys', { agent_name: agentName, lifecycle: 'permanent', label: 'e2e' })
  const agent = new Api(gw.url, { bearer: key.key_token })
  await agent.post('/agent/register', { name: agentName, platform: agentName, workspaces: [{ name: 'work', path: ws }] })
  return { work, ws, gw, admin, agent }
}
