package client

import (
	"context"
	"net/url"
)

// The methods of this file are the people side of the API, under /api/v1/me
// and /api/v1/agents: the client holds a user key (WithToken) or a cookie
// session (Login).

// MeSend sends a mail as the person (POST /api/v1/me/mail/send). People may
// set RoundBudget for a new session (0 = unlimited; nil = the agent's
// default_rounds). Errors as SendMail, except people have no session rate
// limit.
func (c *Client) MeSend(ctx context.Context, req SendMailRequest) (*SendMailResponse, error) {
	return postAs[SendMailResponse](ctx, c, apiPath("/me/mail/send"), req)
}

// MeInbox lists the person's received mails, newest first
// (GET /api/v1/me/mail/inbox). Defaults: status "all", 50 mails, nothing
// marked read.
func (c *Client) MeInbox(ctx context.Context, q InboxQuery) (*MailList, error) {
	return getAs[MailList](ctx, c, apiPath("/me/mail/inbox"), q.values())
}

// MeSent lists the person's sent mails, newest first
// (GET /api/v1/me/mail/sent); page is optional.
func (c *Client) MeSent(ctx context.Context, page ...PageQuery) (*MailList, error) {
	return getAs[MailList](ctx, c, apiPath("/me/mail/sent"), pageValues(page))
}

// MeMarkRead marks the person's mails read, or unread with Unread true
// (POST /api/v1/me/mail/read).
func (c *Client) MeMarkRead(ctx context.Context, req MarkReadRequest) (*MarkReadResponse, error) {
	return postAs[MarkReadResponse](ctx, c, apiPath("/me/mail/read"), req)
}

// MeGetMail reads one mail of the person's mailbox (GET /api/v1/me/mail/{id});
// another's mail is a 404, for admins too.
func (c *Client) MeGetMail(ctx context.Context, id string) (*Mail, error) {
	return getAs[Mail](ctx, c, apiPath("/me/mail/%s", id), nil)
}

// MeForward forwards mail id into a new thread
// (POST /api/v1/me/mail/{id}/forward, T-5).
func (c *Client) MeForward(ctx context.Context, id string, req ForwardRequest) (*SendMailResponse, error) {
	return postAs[SendMailResponse](ctx, c, apiPath("/me/mail/%s/forward", id), req)
}

// MeTree returns the conversation tree around mail id
// (GET /api/v1/me/mail/{id}/tree), nearest nodes first.
func (c *Client) MeTree(ctx context.Context, id string, q TreeQuery) (*Tree, error) {
	return getAs[Tree](ctx, c, apiPath("/me/mail/%s/tree", id), q.values())
}

// MeCounts returns the person's unread mails and pending permission
// requests (GET /api/v1/me/counts).
func (c *Client) MeCounts(ctx context.Context) (*Counts, error) {
	return getAs[Counts](ctx, c, apiPath("/me/counts"), nil)
}

// MeSessions lists the sessions the person takes part in, most recent
// activity first (GET /api/v1/me/sessions); page is optional.
func (c *Client) MeSessions(ctx context.Context, page ...PageQuery) (*SessionList, error) {
	return getAs[SessionList](ctx, c, apiPath("/me/sessions"), pageValues(page))
}

// MeSession returns one of the person's sessions (GET /api/v1/me/sessions/{id}).
func (c *Client) MeSession(ctx context.Context, id string) (*Session, error) {
	return getAs[Session](ctx, c, apiPath("/me/sessions/%s", id), nil)
}

// MeUpdateSession sets a manual alias, the round budget, or resets the used
// rounds of a session (PATCH /api/v1/me/sessions/{id}, W-7).
func (c *Client) MeUpdateSession(ctx context.Context, id string, req UpdateSessionRequest) (*Session, error) {
	return patchAs[Session](ctx, c, apiPath("/me/sessions/%s", id), req)
}

// MeSessionMails lists the mails of a session, oldest first
// (GET /api/v1/me/sessions/{id}/mails, default 50 a page); page is
// optional. NextCursor continues in the same order: the next page holds the
// newer mails after the last one listed.
func (c *Client) MeSessionMails(ctx context.Context, id string, page ...PageQuery) (*MailList, error) {
	return getAs[MailList](ctx, c, apiPath("/me/sessions/%s/mails", id), pageValues(page))
}

// MeSessionRuns lists the run cards of a session
// (GET /api/v1/me/sessions/{id}/runs).
func (c *Client) MeSessionRuns(ctx context.Context, id string) (*RunList, error) {
	return getAs[RunList](ctx, c, apiPath("/me/sessions/%s/runs", id), nil)
}

// MeRuns lists the runs in the sessions the person takes part in
// (GET /api/v1/me/runs): running, idle and queued ones, or every state
// with all.
func (c *Client) MeRuns(ctx context.Context, all bool) (*RunList, error) {
	var q url.Values
	if all {
		q = url.Values{"all": {"true"}}
	}
	var out RunList
	if err := c.getJSON(ctx, apiPath("/me/runs"), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// MeStopRun asks the run's agent to stop it
// (POST /api/v1/me/runs/{run_id}/stop, 202); 409 run_not_running when it
// already ended.
func (c *Client) MeStopRun(ctx context.Context, runID string) (*RunStopResponse, error) {
	var out RunStopResponse
	if err := c.postJSON(ctx, apiPath("/me/runs/%s/stop", runID), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// MePermissions lists permission requests addressed to the person
// (GET /api/v1/me/permissions?status=); status is "pending", "decided",
// "all", or "" for the gateway default.
func (c *Client) MePermissions(ctx context.Context, status string) (*PermissionList, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	return getAs[PermissionList](ctx, c, apiPath("/me/permissions"), q)
}

// Decide answers the permission request mailID
// (POST /api/v1/me/permission/{mail_id}/decide). Only an approval word
// approves ("approve", "always", "yes", "同意", ...); any other text, "" too,
// denies; "always" also stores a grant. The first decision wins: a later
// one is a 409 (IsConflict).
func (c *Client) Decide(ctx context.Context, mailID string, req DecideRequest) (*Permission, error) {
	return postAs[Permission](ctx, c, apiPath("/me/permission/%s/decide", mailID), req)
}

// MeGrants lists the "always allow" grants in the person's sessions (all
// grants for admins) (GET /api/v1/me/grants).
func (c *Client) MeGrants(ctx context.Context) (*GrantList, error) {
	return getAs[GrantList](ctx, c, apiPath("/me/grants"), nil)
}

// MeDeleteGrant revokes a grant (DELETE /api/v1/me/grants/{grant_id}, 204).
func (c *Client) MeDeleteGrant(ctx context.Context, id string) error {
	return c.delete(ctx, apiPath("/me/grants/%s", id))
}

// MeCreateSchedule stores a reminder owned by the person
// (POST /api/v1/me/schedules, 201).
func (c *Client) MeCreateSchedule(ctx context.Context, req CreateScheduleRequest) (*Schedule, error) {
	return postAs[Schedule](ctx, c, apiPath("/me/schedules"), req)
}

// MeListSchedules lists the person's reminders (GET /api/v1/me/schedules).
func (c *Client) MeListSchedules(ctx context.Context) (*ScheduleList, error) {
	return getAs[ScheduleList](ctx, c, apiPath("/me/schedules"), nil)
}

// MeUpdateSchedule changes the fields set of a reminder
// (PATCH /api/v1/me/schedules/{id}).
func (c *Client) MeUpdateSchedule(ctx context.Context, id string, req UpdateScheduleRequest) (*Schedule, error) {
	return patchAs[Schedule](ctx, c, apiPath("/me/schedules/%s", id), req)
}

// MeDeleteSchedule deletes a reminder (DELETE /api/v1/me/schedules/{id}, 204).
func (c *Client) MeDeleteSchedule(ctx context.Context, id string) error {
	return c.delete(ctx, apiPath("/me/schedules/%s", id))
}

// Agents lists the agents, online or not (GET /api/v1/agents).
func (c *Client) Agents(ctx context.Context) (*AgentList, error) {
	return getAs[AgentList](ctx, c, apiPath("/agents"), nil)
}

// Agent returns one agent with its models, sessions and platform sessions
// (GET /api/v1/agents/{name}).
func (c *Client) Agent(ctx context.Context, name string) (*AgentDetail, error) {
	return getAs[AgentDetail](ctx, c, apiPath("/agents/%s", name), nil)
}
