// A client generated from api/openapi.json by standard tools, used against a
// started gateway (issue 19 item 6): openapi-typescript writes the types
// (../.out/apiclient/schema.d.ts, by client.test.mjs), openapi-fetch is the
// client. This file must type-check against what the document says: a
// request the gateway accepts compiles, one it needs more of does not
// (the @ts-expect-error lines fail the check when the document stops
// requiring those fields). client.test.mjs compiles and runs it; it exits
// non-zero on the first answer that is not the expected one.
import assert from 'node:assert/strict'
import createClient from 'openapi-fetch'
import type { paths } from '../.out/apiclient/schema'

const base = process.env.AGENTMAIL_URL ?? ''
const password = process.env.AGENTMAIL_ADMIN_PASSWORD ?? ''
assert.ok(base && password, 'AGENTMAIL_URL and AGENTMAIL_ADMIN_PASSWORD are required')

const anonymous = createClient<paths>({ baseUrl: base })

// Sign in: the cookie and the CSRF token of the answer authenticate the
// person's writes.
const login = await anonymous.POST('/api/v1/auth/login', { body: { username: 'admin', password } })
assert.equal(login.response.status, 200, JSON.stringify(login.error))
assert.equal(login.data?.role, 'admin')
const cookie = (login.response.headers.get('set-cookie') ?? '').split(';')[0]
assert.match(cookie, /^agentmail_session=/)
const admin = createClient<paths>({ baseUrl: base, headers: { Cookie: cookie, 'X-CSRF-Token': login.data?.csrf_token ?? '' } })

const wrong = await anonymous.POST('/api/v1/auth/login', { body: { username: 'admin', password: 'not-the-password' } })
assert.equal(wrong.response.status, 401)
assert.equal(wrong.error?.code, 'invalid_credentials')

// A person without role (the gateway's default, user) and an agent key
// without lifecycle (permanent): both optional in the document.
const user = await admin.POST('/api/v1/admin/users', { body: { username: 'carol', password: 'carol-password' } })
assert.equal(user.response.status, 201, JSON.stringify(user.error))
assert.equal(user.data?.role, 'user')
const key = await admin.POST('/api/v1/admin/agent-keys', { body: { agent_name: 'bot' } })
assert.equal(key.response.status, 201, JSON.stringify(key.error))
const bot = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${key.data?.key_token}` } })
const registered = await bot.POST('/api/v1/agent/register', { body: { platform: 'generated-client' } })
assert.equal(registered.response.status, 200, JSON.stringify(registered.error))

// Send without a body (optional), then read it from the agent's inbox.
const sent = await admin.POST('/api/v1/me/mail/send', { body: { to: 'bot@/work/app', subject: 'from a generated client' } })
assert.equal(sent.response.status, 200, JSON.stringify(sent.error))
const mailID = sent.data?.mail_id ?? ''
assert.ok(mailID)
const inbox = await bot.GET('/api/v1/mail/inbox', { params: { query: { status: 'unread', limit: 10 } } })
assert.equal(inbox.response.status, 200, JSON.stringify(inbox.error))
const mail = inbox.data?.mails.find((m) => m.mail_id === mailID)
assert.equal(mail?.subject, 'from a generated client')
const personInbox = await admin.GET('/api/v1/me/mail/sent', {})
assert.ok(personInbox.data?.mails.some((m) => m.mail_id === mailID))

// The model scope's two shapes.
const unrestricted = await admin.PUT('/api/v1/admin/agents/{name}/models', {
  params: { path: { name: 'bot' } },
  body: { models_unrestricted: true },
})
assert.equal(unrestricted.response.status, 200, JSON.stringify(unrestricted.error))
assert.equal(unrestricted.data?.models_unrestricted, true)
const none = await admin.PUT('/api/v1/admin/agents/{name}/models', { params: { path: { name: 'bot' } }, body: { allowed_models: [] } })
assert.equal(none.data?.models_unrestricted, false)

// A 400 (an empty list of ids) and a 404 (an unknown mail), each with the
// ErrorBody the document declares.
const bad = await bot.POST('/api/v1/mail/read', { body: { mail_ids: [] } })
assert.equal(bad.response.status, 400)
assert.equal(bad.error?.field, 'mail_ids')
const missing = await bot.GET('/api/v1/mail/{id}', { params: { path: { id: 'no-such-mail' } } })
assert.equal(missing.response.status, 404)
assert.equal(missing.error?.code, 'mail_not_found')

// What the document requires, the types require too.
// @ts-expect-error: to is required
void (() => bot.POST('/api/v1/mail/send', { body: { subject: 's' } }))
// @ts-expect-error: the list and models_unrestricted true are two shapes, not one
void (() => admin.PUT('/api/v1/admin/agents/{name}/models', { params: { path: { name: 'bot' } }, body: { allowed_models: [], models_unrestricted: true } }))

console.log('generated client: sign-in, send, inbox, model scope, a 400 and a 404 answered as the document says')
