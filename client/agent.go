package client

import (
	"context"
	"net/url"
	"strconv"
)

// The methods of this file are the agent side of the API: the client's
// token is an agent key. Contacts, Suggest, Resolve and Participants also
// serve people.

// Register announces the agent and its workspaces
// (POST /api/v1/agent/register, W-2). Name must be the key's agent name or
// empty. Errors: 400 field "workspaces" (objects {name, path}, never
// strings), 403 for a user key.
func (c *Client) Register(ctx context.Context, req RegisterRequest) (*Agent, error) {
	return postAs[Agent](ctx, c, apiPath("/agent/register"), req)
}

// Heartbeat reports liveness, the platform session snapshot and the model
// catalogue (POST /api/v1/agent/heartbeat, W-3). A nil slice pointer keeps
// what the gateway has; a pointer to an empty slice clears it (N-7).
func (c *Client) Heartbeat(ctx context.Context, req HeartbeatRequest) (*HeartbeatResponse, error) {
	return postAs[HeartbeatResponse](ctx, c, apiPath("/agent/heartbeat"), req)
}

// AllowedModels returns the models the admin allows this agent, in priority
// order (GET /api/v1/agent/models/allowed); ModelsUnrestricted true means
// "use the platform default".
func (c *Client) AllowedModels(ctx context.Context) (*AllowedModels, error) {
	return getAs[AllowedModels](ctx, c, apiPath("/agent/models/allowed"), nil)
}

// Inbox lists the agent's mails (GET /api/v1/mail/inbox). With the gateway
// defaults (zero InboxQuery) it returns at most 5 unread mails and marks
// exactly those read (T-1); status "all" never marks.
func (c *Client) Inbox(ctx context.Context, q InboxQuery) (*MailList, error) {
	return getAs[MailList](ctx, c, apiPath("/mail/inbox"), q.values())
}

// MarkRead marks mails read, or unread with Unread true
// (POST /api/v1/mail/read); ids the agent may not see are skipped, not
// counted.
func (c *Client) MarkRead(ctx context.Context, req MarkReadRequest) (*MarkReadResponse, error) {
	return postAs[MarkReadResponse](ctx, c, apiPath("/mail/read"), req)
}

// SendMail sends a mail as the agent (POST /api/v1/mail/send, W-5). Errors:
// 404 alias_not_found (never retry as ".new"), 403 budget_exhausted, 429
// session rate limit (RetryAfterOf), 400 naming the field. A relay replay
// answers Status "duplicate_relay" without storing anything.
func (c *Client) SendMail(ctx context.Context, req SendMailRequest) (*SendMailResponse, error) {
	return postAs[SendMailResponse](ctx, c, apiPath("/mail/send"), req)
}

// GetMail reads one mail the agent sent or received (GET /api/v1/mail/{id});
// any other id is a 404.
func (c *Client) GetMail(ctx context.Context, id string) (*Mail, error) {
	return getAs[Mail](ctx, c, apiPath("/mail/%s", id), nil)
}

// Thread lists the mails of the session of mail id, oldest first
// (GET /api/v1/mail/{id}/thread).
func (c *Client) Thread(ctx context.Context, id string) (*MailList, error) {
	return getAs[MailList](ctx, c, apiPath("/mail/%s/thread", id), nil)
}

// Forward starts a new thread to req.To quoting mail id
// (POST /api/v1/mail/{id}/forward, T-5).
func (c *Client) Forward(ctx context.Context, id string, req ForwardRequest) (*SendMailResponse, error) {
	return postAs[SendMailResponse](ctx, c, apiPath("/mail/%s/forward", id), req)
}

// RequestPermission asks the people of a session to decide
// (POST /api/v1/permission/request, W-6). Idempotent on RelayKey: a replay
// answers the same request with Duplicate true. Errors: 409 when no person
// in the session can decide.
func (c *Client) RequestPermission(ctx context.Context, req PermissionRequest) (*Permission, error) {
	return postAs[Permission](ctx, c, apiPath("/permission/request"), req)
}

// GetPermission returns the state of the permission request mailID
// (GET /api/v1/permission/{mail_id}); used after a restart to learn a
// decision missed on the stream (B-4).
func (c *Client) GetPermission(ctx context.Context, mailID string) (*Permission, error) {
	return getAs[Permission](ctx, c, apiPath("/permission/%s", mailID), nil)
}

// Grants lists the "always allow" grants that apply to the agent's requests
// in one session (GET /api/v1/grants?session_id=&tool=): those given by the
// session's only person for the agent's workspace there; none in a session
// with several people. sessionID is required (400 otherwise); tool filters
// when it is not empty.
func (c *Client) Grants(ctx context.Context, sessionID, tool string) (*GrantList, error) {
	q := url.Values{}
	q.Set("session_id", sessionID)
	if tool != "" {
		q.Set("tool", tool)
	}
	return getAs[GrantList](ctx, c, apiPath("/grants"), q)
}

// GetSession returns a session the agent takes part in
// (GET /api/v1/sessions/{id}).
func (c *Client) GetSession(ctx context.Context, id string) (*Session, error) {
	return getAs[Session](ctx, c, apiPath("/sessions/%s", id), nil)
}

// SyncSession proposes the platform's alias or title for a session
// (POST /api/v1/sessions/{id}/sync, W-7); the answer carries the final alias
// (a person's manual alias always wins), which the bridge writes back (D-5).
func (c *Client) SyncSession(ctx context.Context, id string, req SyncSessionRequest) (*Session, error) {
	return postAs[Session](ctx, c, apiPath("/sessions/%s/sync", id), req)
}

// BindPlatformSession stores the platform's session id on the mail session
// (PUT /api/v1/sessions/{id}/platform-session, B-3.3), so the map survives a
// bridge restart.
func (c *Client) BindPlatformSession(ctx context.Context, id string, req BindPlatformSessionRequest) (*Session, error) {
	return putAs[Session](ctx, c, apiPath("/sessions/%s/platform-session", id), req)
}

// Participants lists the members of a session
// (GET /api/v1/sessions/{id}/participants; agents and people taking part).
func (c *Client) Participants(ctx context.Context, sessionID string) (*ParticipantList, error) {
	return getAs[ParticipantList](ctx, c, apiPath("/sessions/%s/participants", sessionID), nil)
}

// SessionRuns lists the runs of a session (GET /api/v1/sessions/{id}/runs).
func (c *Client) SessionRuns(ctx context.Context, sessionID string) (*RunList, error) {
	return getAs[RunList](ctx, c, apiPath("/sessions/%s/runs", sessionID), nil)
}

// OpenRuns lists the agent's own runs that have not ended (running,
// queued, idle), oldest first, at most 200 (GET /api/v1/runs). instanceID
// is the calling bridge's instance (BridgeInstance.ID, "" for none): 409
// bridge_instance_conflict while another instance holds the agent's
// bridge lease, so no bridge ends the runs of a live other one.
func (c *Client) OpenRuns(ctx context.Context, instanceID string) (*RunList, error) {
	var q url.Values
	if instanceID != "" {
		q = url.Values{"instance_id": {instanceID}}
	}
	return getAs[RunList](ctx, c, apiPath("/runs"), q)
}

// PutRun creates or updates a run (PUT /api/v1/runs/{run_id}, an upsert);
// run.RunID names it and must not be empty.
func (c *Client) PutRun(ctx context.Context, run Run) (*Run, error) {
	return putAs[Run](ctx, c, apiPath("/runs/%s", run.RunID), run)
}

// CreateSchedule stores a reminder owned by the agent
// (POST /api/v1/schedules, 201). Errors: 400 field "event_time" (natural
// language is refused; the message gives the server's current time).
func (c *Client) CreateSchedule(ctx context.Context, req CreateScheduleRequest) (*Schedule, error) {
	return postAs[Schedule](ctx, c, apiPath("/schedules"), req)
}

// ListSchedules lists the agent's reminders (GET /api/v1/schedules); Hint is
// set near the per-owner limit.
func (c *Client) ListSchedules(ctx context.Context) (*ScheduleList, error) {
	return getAs[ScheduleList](ctx, c, apiPath("/schedules"), nil)
}

// UpdateSchedule changes the fields set of a reminder
// (PATCH /api/v1/schedules/{id}).
func (c *Client) UpdateSchedule(ctx context.Context, id string, req UpdateScheduleRequest) (*Schedule, error) {
	return patchAs[Schedule](ctx, c, apiPath("/schedules/%s", id), req)
}

// DeleteSchedule deletes a reminder (DELETE /api/v1/schedules/{id}, 204).
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	return c.delete(ctx, apiPath("/schedules/%s", id))
}

// Contacts lists the people and agents the caller can write to
// (GET /api/v1/contacts).
func (c *Client) Contacts(ctx context.Context) (*ContactList, error) {
	return getAs[ContactList](ctx, c, apiPath("/contacts"), nil)
}

// Suggest completes a partly typed address
// (GET /api/v1/address/suggest?q=&limit=): names, workspaces and session
// aliases, recent first. limit 0 leaves the gateway default (10).
func (c *Client) Suggest(ctx context.Context, q string, limit int) (*SuggestionList, error) {
	v := url.Values{"q": {q}}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	return getAs[SuggestionList](ctx, c, apiPath("/address/suggest"), v)
}

// Resolve previews where a mail to address would go, creating nothing
// (GET /api/v1/address/resolve?address=). An unknown alias or name is a 404,
// exactly as sending would be.
func (c *Client) Resolve(ctx context.Context, address string) (*Resolution, error) {
	return getAs[Resolution](ctx, c, apiPath("/address/resolve"), url.Values{"address": {address}})
}
