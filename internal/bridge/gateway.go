package bridge

import (
	"context"

	"github.com/agentmail/agentmail/client"
)

// Gateway is the part of the AgentMail HTTP API the bridge core uses, with
// the method names of the public Go client: *client.Client satisfies it.
// Every call carries the agent key; errors are the client's *client.APIError
// for gateway answers (W-9) and plain errors for transport faults.
type Gateway interface {
	// Register is POST /api/v1/agent/register (B-1.2, W-2).
	Register(ctx context.Context, req client.RegisterRequest) (*client.Agent, error)
	// Heartbeat is POST /api/v1/agent/heartbeat (B-2, W-3).
	Heartbeat(ctx context.Context, req client.HeartbeatRequest) (*client.HeartbeatResponse, error)
	// Inbox is GET /api/v1/mail/inbox; the core always passes MarkRead=false
	// (B-7: catch-up never marks mail read, the model's read_inbox does).
	Inbox(ctx context.Context, q client.InboxQuery) (*client.MailList, error)
	// SendMail is POST /api/v1/mail/send (W-5): relay summaries and failure
	// reports only; the core never sends a mail without a relay.
	SendMail(ctx context.Context, req client.SendMailRequest) (*client.SendMailResponse, error)
	// Thread is GET /api/v1/mail/{id}/thread: the mail's session, oldest
	// first (B-5.3: the gateway's record of what the model sent).
	Thread(ctx context.Context, mailID string) (*client.MailList, error)
	// AllowedModels is GET /api/v1/agent/models/allowed: the model scope,
	// read directly when a mail arrives before the first heartbeat told it.
	AllowedModels(ctx context.Context) (*client.AllowedModels, error)
	// RequestPermission is POST /api/v1/permission/request (B-8, W-6).
	RequestPermission(ctx context.Context, req client.PermissionRequest) (*client.Permission, error)
	// Grants is GET /api/v1/grants?tool=&scope= ("always allow" records).
	Grants(ctx context.Context, sessionID, tool string) (*client.GrantList, error)
	// GetSession is GET /api/v1/sessions/{id} (B-3.3: the bound platform
	// session id survives a bridge restart there).
	GetSession(ctx context.Context, id string) (*client.Session, error)
	// SyncSession is POST /api/v1/sessions/{id}/sync (D-5, W-7); the answer
	// carries the gateway's final alias.
	SyncSession(ctx context.Context, id string, req client.SyncSessionRequest) (*client.Session, error)
	// BindPlatformSession is PUT /api/v1/sessions/{id}/platform-session (B-3.3).
	BindPlatformSession(ctx context.Context, id string, req client.BindPlatformSessionRequest) (*client.Session, error)
	// PutRun is PUT /api/v1/runs/{run_id} (seed 004 run supervision).
	PutRun(ctx context.Context, run client.Run) (*client.Run, error)
	// SessionRuns is GET /api/v1/sessions/{id}/runs (catch-up skips mails a
	// run already handled, so a restart never runs a mail twice).
	SessionRuns(ctx context.Context, sessionID string) (*client.RunList, error)
	// OpenRuns is GET /api/v1/runs: the agent's runs that have not ended;
	// at each connection the bridge ends the ones it does not hold
	// (reconcile.go, issue 16).
	OpenRuns(ctx context.Context, instanceID string) (*client.RunList, error)
	// GetMail is GET /api/v1/mail/{id} (not marked read): the mail a run
	// left by an earlier bridge answers, for its notice.
	GetMail(ctx context.Context, id string) (*client.Mail, error)
	// MarkRead is POST /api/v1/mail/read: a stop mail, which no model
	// reads, is marked read once handled, so no catch-up sees it again.
	MarkRead(ctx context.Context, req client.MarkReadRequest) (*client.MarkReadResponse, error)
	// CreateTurnToken is POST /api/v1/agent/turn-tokens: the token the
	// platform's tools get for one turn (turntoken.go).
	CreateTurnToken(ctx context.Context, sessionID string) (*client.TurnToken, error)
	// RevokeTurnToken is DELETE /api/v1/agent/turn-tokens/{id}, at turn end.
	RevokeTurnToken(ctx context.Context, tokenID string) error
}

// EventStream is one open agent event stream (GET /api/v1/events/stream).
// Events delivers events in order and is closed when the connection ends,
// for whatever reason; the core then reconnects (D-7.2).
type EventStream interface {
	Events() <-chan client.Event
}

// SubscribeFunc opens the agent event stream. lastEventID 0 sends no
// Last-Event-ID header (B-1.4, N-11); a reconnect passes the id of the last
// event seen (D-7.2). It returns once the stream is connected or failed;
// the stream ends when ctx ends.
type SubscribeFunc func(ctx context.Context, lastEventID int64) (EventStream, error)
