package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
)

// fakeGateway is an in-memory stand-in for the gateway, with the semantics
// the bridge relies on: relay idempotency by relay_key, unread state,
// inbox newest first with cursors, threads oldest first, an event log with
// Last-Event-ID replay and no replay on a first connection, permission
// requests idempotent by relay_key, session alias sync with collision
// suffixes and manual aliases winning, runs as upserts.
type fakeGateway struct {
	agent string
	key   string

	mu         sync.Mutex
	cond       *sync.Cond
	seq        int
	base       time.Time
	mails      []*client.Mail
	unread     map[string]bool // mail id → unread for the agent
	sessions   map[string]*client.Session
	relays     map[string]string // relay_key → mail id
	perms      map[string]*client.Permission
	grants     []client.Grant
	runs       map[string]client.Run
	runOrder   []string
	putLog     []client.Run // every run report, in order
	events     []client.Event
	streams    []*fakeStream
	subscribe  []int64 // Last-Event-ID of every subscribe call
	beats      []client.HeartbeatRequest
	registers  []client.RegisterRequest
	inboxQs    []client.InboxQuery
	sends      []client.SendMailRequest
	syncs      []client.SyncSessionRequest
	binds      []string
	turnTokens []*fakeTurnToken
	turnErr    error // CreateTurnToken fails with it

	allowed      []client.ModelRef
	unrestricted bool
	failBeats    int   // fail this many heartbeats
	beatErr      error // when set, every heartbeat answers it
	permErr      error // RequestPermission fails with it
}

func newFakeGateway(agent, key string) *fakeGateway {
	g := &fakeGateway{agent: agent, key: key, base: time.Date(2026, 9, 2, 10, 0, 0, 0, time.UTC),
		unread: map[string]bool{}, sessions: map[string]*client.Session{}, relays: map[string]string{},
		perms: map[string]*client.Permission{}, runs: map[string]client.Run{}, unrestricted: true}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *fakeGateway) nextLocked(prefix string) (string, time.Time) {
	g.seq++
	return fmt.Sprintf("%s%d", prefix, g.seq), g.base.Add(time.Duration(g.seq) * time.Millisecond)
}

func (g *fakeGateway) changed() { g.cond.Broadcast() }

// --- test controls

// newSession creates a mail session in a workspace.
func (g *fakeGateway) newSession(workspace, subject string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, now := g.nextLocked("ses_")
	g.sessions[id] = &client.Session{SessionID: id, Alias: "auto-" + id, AliasSource: "auto", Subject: subject,
		AgentName: g.agent, Workspace: workspace, CreatedAt: now, LastActivity: now}
	return id
}

// mailOpts describes a mail written to the agent.
type mailOpts struct {
	from, fromKind, subject, body, session, workspace, mailType string
	push                                                        bool // publish a new_mail event
}

// deliverMail stores a mail to the agent (unread) and, with push, publishes
// its new_mail event. It returns the mail id.
func (g *fakeGateway) deliverMail(o mailOpts) string {
	if o.fromKind == "" {
		o.fromKind = "person"
	}
	if o.mailType == "" {
		o.mailType = client.MailTypeNormal
	}
	if o.session == "" {
		o.session = g.newSession(o.workspace, o.subject)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	id, now := g.nextLocked("mail_")
	s := g.sessions[o.session]
	addr := g.agent + "@" + o.workspace + "." + s.Alias
	m := &client.Mail{MailID: id, SessionID: o.session, SessionAlias: s.Alias, FromName: o.from, FromKind: o.fromKind,
		FromAddress: o.from, Subject: o.subject, Body: o.body, MailType: o.mailType, CreatedAt: now,
		Recipients: []client.Recipient{{Name: g.agent, Kind: "agent", Role: "to", Address: addr, Workspace: o.workspace}}}
	if o.fromKind == "agent" {
		m.FromAddress = o.from + "@/elsewhere." + s.Alias
	}
	g.mails = append(g.mails, m)
	g.unread[id] = true
	if o.push {
		ev := client.NewMailEvent{MailID: id, SessionID: o.session, FromName: o.from, FromKind: o.fromKind, Subject: o.subject,
			MailType: o.mailType, Role: "to", ToWorkspace: o.workspace, SessionAlias: s.Alias,
			ReplyAddress: m.FromAddress, SelfAddress: addr, CreatedAt: now}
		g.publishLocked(client.EventNewMail, ev)
	}
	g.changed()
	return id
}

// pushExisting publishes the new_mail event of a stored mail (the window
// between heartbeat and stream of B-7.3).
func (g *fakeGateway) pushExisting(mailID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.mails {
		if m.MailID == mailID {
			r := m.Recipients[0]
			g.publishLocked(client.EventNewMail, client.NewMailEvent{MailID: m.MailID, SessionID: m.SessionID, FromName: m.FromName,
				FromKind: m.FromKind, Subject: m.Subject, MailType: m.MailType, Role: "to", ToWorkspace: r.Workspace,
				SessionAlias: m.SessionAlias, ReplyAddress: m.FromAddress, SelfAddress: r.Address, CreatedAt: m.CreatedAt})
		}
	}
}

func (g *fakeGateway) publishLocked(typ string, payload any) {
	data, _ := json.Marshal(payload)
	g.seq++
	ev := client.Event{ID: int64(g.seq), Type: typ, Data: data}
	g.events = append(g.events, ev)
	for _, s := range g.streams {
		s.send(ev)
	}
}

// decide publishes the permission_decision of a request.
func (g *fakeGateway) decide(relayKey string, approved bool, decision, by string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.perms[relayKey]
	ev := client.PermissionDecisionEvent{RelayKey: relayKey, RelayKind: "permission", Decision: decision,
		Approved: approved, DecidedBy: by}
	if p != nil {
		p.Status = "denied"
		if approved {
			p.Status = "approved"
		}
		p.Approved, p.Decision, p.DecidedBy = approved, decision, by
		ev.MailID, ev.SessionID = p.MailID, p.SessionID
		id, _ := g.nextLocked("mail_")
		ev.DecisionMailID = id
	}
	g.publishLocked(client.EventPermissionDecision, ev)
	g.changed()
}

// decideRaw publishes a decision event as given (for a request the fake
// never saw, as after a restart).
func (g *fakeGateway) decideRaw(ev client.PermissionDecisionEvent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.publishLocked(client.EventPermissionDecision, ev)
	g.changed()
}

// dropStreams ends every open event stream (a network drop).
func (g *fakeGateway) dropStreams() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.streams {
		s.close()
	}
	g.streams = nil
	g.changed()
}

// waitFor blocks until cond holds (called with the fake locked) or the
// timeout passes.
func (g *fakeGateway) waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() { g.mu.Lock(); g.changed(); g.mu.Unlock() })
	defer t.Stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		g.cond.Wait()
	}
	return true
}

func (g *fakeGateway) sentMails() []client.SendMailRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]client.SendMailRequest(nil), g.sends...)
}

func (g *fakeGateway) allRuns() []client.Run {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]client.Run, 0, len(g.runOrder))
	for _, id := range g.runOrder {
		out = append(out, g.runs[id])
	}
	return out
}

func (g *fakeGateway) session(id string) client.Session {
	g.mu.Lock()
	defer g.mu.Unlock()
	return *g.sessions[id]
}

// --- bridge.Gateway

func apiErr(status int, code, msg, suggestion string) error {
	return &client.APIError{Status: status, Body: client.ErrorBody{Error: msg, Code: code, Suggestion: suggestion}}
}

func (g *fakeGateway) Register(ctx context.Context, req client.RegisterRequest) (*client.Agent, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.registers = append(g.registers, req)
	g.changed()
	if g.key == "" {
		return nil, apiErr(401, "unauthorized", "unknown agent key", "")
	}
	return &client.Agent{Name: g.agent, Platform: req.Platform, Status: "online"}, nil
}

func (g *fakeGateway) Heartbeat(ctx context.Context, req client.HeartbeatRequest) (*client.HeartbeatResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.beats = append(g.beats, req)
	g.changed()
	if g.failBeats > 0 {
		g.failBeats--
		return nil, fmt.Errorf("connection refused")
	}
	if g.beatErr != nil {
		return nil, g.beatErr
	}
	pending := 0
	for _, u := range g.unread {
		if u {
			pending++
		}
	}
	return &client.HeartbeatResponse{Status: "ok", PendingMails: pending,
		AllowedModels: append([]client.ModelRef{}, g.allowed...), ModelsUnrestricted: g.unrestricted}, nil
}

func (g *fakeGateway) Inbox(ctx context.Context, q client.InboxQuery) (*client.MailList, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inboxQs = append(g.inboxQs, q)
	var list []client.Mail
	for i := len(g.mails) - 1; i >= 0; i-- { // newest first
		m := g.mails[i]
		if m.Recipients[0].Name != g.agent {
			continue
		}
		if q.Status == "unread" && !g.unread[m.MailID] {
			continue
		}
		list = append(list, *m)
	}
	start := 0
	if q.Cursor != "" {
		start, _ = strconv.Atoi(q.Cursor)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 5
	}
	end := start + limit
	out := &client.MailList{}
	if end < len(list) {
		out.NextCursor = strconv.Itoa(end)
	} else {
		end = len(list)
	}
	if start < len(list) {
		out.Mails = list[start:end]
	}
	if q.MarkRead == nil || *q.MarkRead {
		if q.Status != "all" {
			for _, m := range out.Mails {
				g.unread[m.MailID] = false
			}
		}
	}
	return out, nil
}

func (g *fakeGateway) findMailLocked(id string) *client.Mail {
	for _, m := range g.mails {
		if m.MailID == id {
			return m
		}
	}
	return nil
}

func (g *fakeGateway) SendMail(ctx context.Context, req client.SendMailRequest) (*client.SendMailResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if req.Relay != "" {
		if req.RelayKey == "" {
			return nil, apiErr(400, "bad_field", "relay_key is required with relay", "")
		}
		if id, ok := g.relays[req.RelayKey]; ok {
			return &client.SendMailResponse{Status: "duplicate_relay", MailID: id}, nil
		}
	}
	parent := g.findMailLocked(req.ReplyTo)
	if req.Relay == client.RelaySummary && parent == nil {
		return nil, apiErr(400, "bad_field", "a summary relay must reply to a received mail", "")
	}
	g.sends = append(g.sends, req)
	sessionID := ""
	if parent != nil {
		sessionID = parent.SessionID
	} else {
		sessionID = g.newSessionLocked(req.Subject)
	}
	id, now := g.nextLocked("mail_")
	mt := req.MailType
	if mt == "" {
		mt = client.MailTypeNormal
	}
	m := &client.Mail{MailID: id, SessionID: sessionID, FromName: g.agent, FromKind: "agent", Subject: req.Subject,
		Body: req.Body, MailType: mt, Relay: req.Relay, CreatedAt: now, ParentMailID: req.ReplyTo,
		Recipients: []client.Recipient{{Name: req.To, Kind: "person", Role: "to", Address: req.To}}}
	g.mails = append(g.mails, m)
	if req.Relay != "" {
		g.relays[req.RelayKey] = id
	}
	g.changed()
	return &client.SendMailResponse{Status: "sent", MailID: id, SessionID: sessionID}, nil
}

func (g *fakeGateway) newSessionLocked(subject string) string {
	id, now := g.nextLocked("ses_")
	g.sessions[id] = &client.Session{SessionID: id, Alias: "auto-" + id, AliasSource: "auto", Subject: subject, CreatedAt: now}
	return id
}

// modelSend stores a mail the model sent itself with send_mail (no relay),
// into the session of replyTo.
func (g *fakeGateway) modelSend(replyTo, body string) {
	_, _ = g.SendMail(context.Background(), client.SendMailRequest{To: "alice", Subject: "Re: x", Body: body, ReplyTo: replyTo})
}

func (g *fakeGateway) Thread(ctx context.Context, mailID string) (*client.MailList, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.findMailLocked(mailID)
	if m == nil {
		return nil, apiErr(404, "not_found", "no such mail", "")
	}
	out := &client.MailList{}
	for _, x := range g.mails {
		if x.SessionID == m.SessionID {
			out.Mails = append(out.Mails, *x)
		}
	}
	return out, nil
}

func (g *fakeGateway) RequestPermission(ctx context.Context, req client.PermissionRequest) (*client.Permission, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.permErr != nil {
		return nil, g.permErr
	}
	if p, ok := g.perms[req.RelayKey]; ok {
		c := *p
		c.Duplicate = true
		return &c, nil
	}
	id, now := g.nextLocked("mail_")
	p := &client.Permission{MailID: id, SessionID: req.SessionID, AgentName: g.agent, Question: req.Question,
		Context: req.Context, Tool: req.Tool, RelayKey: req.RelayKey, Status: "pending", CreatedAt: now,
		Options: []string{"approve", "always", "deny"}}
	g.perms[req.RelayKey] = p
	g.mails = append(g.mails, &client.Mail{MailID: id, SessionID: req.SessionID, FromName: g.agent, FromKind: "agent",
		Subject: req.Question, Body: req.Context, MailType: client.MailTypePermissionRequest, Relay: client.RelayPermission, CreatedAt: now,
		Recipients: []client.Recipient{{Name: "alice", Kind: "person", Role: "to"}}})
	g.changed()
	c := *p
	return &c, nil
}

func (g *fakeGateway) permission(relayKey string) *client.Permission {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p, ok := g.perms[relayKey]; ok {
		c := *p
		return &c
	}
	return nil
}

func (g *fakeGateway) Grants(ctx context.Context, sessionID, tool string) (*client.GrantList, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := &client.GrantList{}
	for _, gr := range g.grants {
		if tool == "" || gr.Tool == tool {
			out.Grants = append(out.Grants, gr)
		}
	}
	return out, nil
}

func (g *fakeGateway) AllowedModels(ctx context.Context) (*client.AllowedModels, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return &client.AllowedModels{AllowedModels: append([]client.ModelRef{}, g.allowed...), ModelsUnrestricted: g.unrestricted}, nil
}

func (g *fakeGateway) GetSession(ctx context.Context, id string) (*client.Session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sessions[id]
	if !ok {
		return nil, apiErr(404, "not_found", "no such session", "")
	}
	c := *s
	return &c, nil
}

func (g *fakeGateway) SyncSession(ctx context.Context, id string, req client.SyncSessionRequest) (*client.Session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.syncs = append(g.syncs, req)
	s, ok := g.sessions[id]
	if !ok {
		return nil, apiErr(404, "not_found", "no such session", "")
	}
	if req.Title != "" {
		s.Subject = req.Title
	}
	if req.Alias != "" && s.AliasSource != "manual" {
		alias := req.Alias
		for n := 2; g.aliasTakenLocked(alias, id); n++ {
			alias = fmt.Sprintf("%s-%d", req.Alias, n)
		}
		s.Alias, s.AliasSource = alias, "platform"
	}
	g.changed()
	c := *s
	return &c, nil
}

func (g *fakeGateway) aliasTakenLocked(alias, except string) bool {
	for id, s := range g.sessions {
		if id != except && s.Alias == alias && s.Workspace != "" {
			return true
		}
	}
	return false
}

func (g *fakeGateway) BindPlatformSession(ctx context.Context, id string, req client.BindPlatformSessionRequest) (*client.Session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sessions[id]
	if !ok {
		return nil, apiErr(404, "not_found", "no such session", "")
	}
	s.PlatformSessionID = req.PlatformSessionID
	g.binds = append(g.binds, id+"="+req.PlatformSessionID)
	g.changed()
	c := *s
	return &c, nil
}

func (g *fakeGateway) PutRun(ctx context.Context, run client.Run) (*client.Run, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.runs[run.RunID]; !ok {
		g.runOrder = append(g.runOrder, run.RunID)
	}
	g.runs[run.RunID] = run
	g.putLog = append(g.putLog, run)
	g.changed()
	return &run, nil
}

func (g *fakeGateway) SessionRuns(ctx context.Context, sessionID string) (*client.RunList, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := &client.RunList{}
	for _, id := range g.runOrder {
		if r := g.runs[id]; r.SessionID == sessionID {
			out.Runs = append(out.Runs, r)
		}
	}
	return out, nil
}

func (g *fakeGateway) OpenRuns(ctx context.Context, instanceID string) (*client.RunList, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := &client.RunList{}
	for _, id := range g.runOrder {
		switch r := g.runs[id]; r.State {
		case client.RunRunning, client.RunQueued, client.RunIdle:
			out.Runs = append(out.Runs, r)
		}
	}
	return out, nil
}

func (g *fakeGateway) GetMail(ctx context.Context, id string) (*client.Mail, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m := g.findMailLocked(id); m != nil {
		c := *m
		return &c, nil
	}
	return nil, &client.APIError{Status: 404}
}

func (g *fakeGateway) MarkRead(ctx context.Context, req client.MarkReadRequest) (*client.MarkReadResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, id := range req.MailIDs {
		if _, ok := g.unread[id]; ok {
			g.unread[id] = req.Unread
			n++
		}
	}
	g.changed()
	return &client.MarkReadResponse{Marked: n}, nil
}

// Subscribe is the bridge.SubscribeFunc of the fake: lastEventID 0 gets
// nothing old; a positive one replays what came after it.
func (g *fakeGateway) Subscribe(ctx context.Context, lastEventID int64) (bridge.EventStream, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.subscribe = append(g.subscribe, lastEventID)
	s := &fakeStream{ch: make(chan client.Event, 256)}
	if lastEventID > 0 {
		for _, ev := range g.events {
			if ev.ID > lastEventID {
				s.send(ev)
			}
		}
	}
	g.streams = append(g.streams, s)
	go func() {
		<-ctx.Done()
		g.mu.Lock()
		s.close()
		g.mu.Unlock()
	}()
	g.changed()
	return s, nil
}

type fakeStream struct {
	ch     chan client.Event
	closed bool
}

func (s *fakeStream) Events() <-chan client.Event { return s.ch }
func (s *fakeStream) send(ev client.Event) {
	if !s.closed {
		s.ch <- ev
	}
}
func (s *fakeStream) close() {
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

// --- log capture

// fakeTurnToken is one issued turn token of the fake.
type fakeTurnToken struct {
	client.TurnToken
	revoked bool
}

// CreateTurnToken issues a token for a session the fake knows; an unknown
// session is the gateway's 404.
func (g *fakeGateway) CreateTurnToken(ctx context.Context, sessionID string) (*client.TurnToken, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.turnErr != nil {
		return nil, g.turnErr
	}
	if _, ok := g.sessions[sessionID]; !ok {
		return nil, &client.APIError{Status: 404, Body: client.ErrorBody{Error: "no such session", Code: "session_not_found"}}
	}
	id, now := g.nextLocked("tt_")
	t := &fakeTurnToken{TurnToken: client.TurnToken{TokenID: id, Token: "amt_" + id, SessionID: sessionID, ExpiresAt: now.Add(12 * time.Hour)}}
	g.turnTokens = append(g.turnTokens, t)
	g.changed()
	out := t.TurnToken
	return &out, nil
}

// RevokeTurnToken marks an issued token revoked; unknown or revoked is 404.
func (g *fakeGateway) RevokeTurnToken(ctx context.Context, tokenID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range g.turnTokens {
		if t.TokenID == tokenID && !t.revoked {
			t.revoked = true
			g.changed()
			return nil
		}
	}
	return &client.APIError{Status: 404, Body: client.ErrorBody{Error: "no such active turn token", Code: "turn_token_not_found"}}
}

// turnTokenState answers the issued token with that bearer value and
// whether it is still active.
func (g *fakeGateway) turnTokenState(token string) (client.TurnToken, bool, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.turnTokenStateLocked(token)
}

// turnTokenStateLocked is turnTokenState with the fake locked (waitGW).
func (g *fakeGateway) turnTokenStateLocked(token string) (client.TurnToken, bool, bool) {
	for _, t := range g.turnTokens {
		if t.Token == token {
			return t.TurnToken, !t.revoked, true
		}
	}
	return client.TurnToken{}, false, false
}
