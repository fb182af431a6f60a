package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/modeltext"
	"github.com/agentmail/agentmail/internal/store"
)

// DefaultPermissionOptions are the options of a permission request that
// names none (issue 3: approve / deny, and "always" offered).
var DefaultPermissionOptions = []string{"approve", "always", "deny"}

// Permission statuses and the ways a decision is made.
const (
	PermissionStatusPending  = "pending"
	PermissionStatusApproved = "approved"
	PermissionStatusDenied   = "denied"

	DecidedViaAPI     = "api"
	DecidedViaReply   = "reply"
	DecidedViaTimeout = "timeout"
	// DecidedViaStop closes a pending request of a run a person stopped
	// (issue 16, B-9.2): denied, decided_by the person who stopped it.
	DecidedViaStop = "stop"

	// DecidedByTimeout is decided_by of a request the clock decided.
	DecidedByTimeout = "timeout"
	// TimeoutDecision is the decision word of a timed-out request (and of
	// one a stop closed).
	TimeoutDecision = "deny"
)

// Limits of a permission request.
const (
	MaxQuestionRunes  = 2000
	MaxOptions        = 10
	MaxOptionRunes    = 100
	MaxDecisionRunes  = 200
	MaxToolRunes      = 200
	MaxScopeRunes     = 1024
	maxPermissionList = 200
)

// errDecisionLost aborts a decision transaction whose insert lost the
// first-wins race; the caller answers 409 from the stored decision.
var errDecisionLost = errors.New("permission already decided")

// errPermissionReplay aborts a request transaction whose relay key was
// claimed concurrently; the caller answers the stored request.
var errPermissionReplay = errors.New("permission request replayed")

// permissionView converts a stored request to its API form. ToolSummary
// is the stored one, or the tool name for a request stored without one.
func permissionView(row store.PermissionRow) client.Permission {
	summary := ShowInvisible(row.ToolSummary) // also one stored before invisible characters were shown
	if summary == "" {
		summary = ToolSummary(row.Tool, nil)
	}
	p := client.Permission{MailID: row.MailID, SessionID: row.SessionID, AgentName: row.AgentName,
		Question: row.Question, Options: []string{}, Context: row.Context, Tool: row.Tool, ArgsHash: row.ArgsHash,
		ToolSummary: summary, RelayKey: row.RelayKey, Status: PermissionStatusPending, ExpiresAt: row.ExpiresAt, CreatedAt: row.CreatedAt,
		RunID: row.RunID}
	_ = json.Unmarshal([]byte(row.Options), &p.Options)
	if row.Decided {
		p.Status = PermissionStatusDenied
		if row.Approved {
			p.Status = PermissionStatusApproved
		}
		p.Decision, p.Approved, p.Always, p.Note = row.Decision, row.Approved, row.Always, row.Note
		p.DecidedBy, p.DecidedVia, p.DecisionMailID, p.DecidedAt = row.DecidedBy, row.DecidedVia, row.DecisionMailID, row.DecidedAt
	}
	return p
}

// permissionsOfMails answers, for the mail view (mailViews), the state of
// the permission requests among mailIDs, by mail id; other ids are absent.
func permissionsOfMails(ctx context.Context, q *store.Q, mailIDs []string) (map[string]*client.Permission, error) {
	rows, err := q.PermissionsByMail(ctx, mailIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*client.Permission, len(rows))
	for id, row := range rows {
		v := permissionView(row)
		out[id] = &v
	}
	return out, nil
}

func permissionNotFound() error {
	return NotFound("permission_not_found", "no such permission request",
		"check the mail_id of the permission_request mail; requests you may not see are not found either")
}

// RequestPermission stores a permission request of an agent (W-6, B-8) as a
// mail_type=permission_request mail (relay "permission") to every person
// taking part in the session and, in a delegated session, to the people of
// its origin chain (delegation.go originPeople), and emits a
// permission_request event to each.
//
// Rules: question, session_id and relay_key are required; the agent must
// take part in the session (else 404). The request never uses a round
// (B-8.5). It is idempotent on (agent, relay_key) (B-8.3): a replay answers
// the stored request with Duplicate true and stores nothing. No person in
// the session or its origin chain → 409 "no_person_to_decide" with a suggestion (seed 003).
// Options default to DefaultPermissionOptions; the canonical hash of
// tool_input is stored as args_hash and ToolSummary(tool, tool_input) as
// tool_summary; scope defaults to the agent's path in the session and must
// lie inside it (requestScope); run_id is the agent's run of the session
// that is running now ("" when none is), so that a stop of that run closes
// the request (closeRunPermissionsTx);
// expires_at must lie in the future. The request mail's parent is the
// newest mail of the session addressed to the agent (none: no parent), so
// it sits in the conversation tree under the work it interrupts.
func (s *Service) RequestPermission(ctx context.Context, p *Principal, req client.PermissionRequest) (*client.Permission, error) {
	if !p.IsAgent() {
		return nil, Forbidden("agent_only", "permission requests are sent by agents", "")
	}
	req.Question = strings.TrimSpace(req.Question)
	req.SessionID = strings.TrimSpace(req.SessionID)
	req.RelayKey = strings.TrimSpace(req.RelayKey)
	req.Tool = strings.TrimSpace(req.Tool)
	req.Scope = strings.TrimSpace(req.Scope)
	switch {
	case req.Question == "":
		return nil, Invalid("question", "question is required", "ask in one sentence what the person should allow")
	case utf8.RuneCountInString(req.Question) > MaxQuestionRunes:
		return nil, Invalid("question", fmt.Sprintf("question is longer than %d characters", MaxQuestionRunes), "put details in context")
	case req.SessionID == "":
		return nil, Invalid("session_id", "session_id is required", "use the session_id of the mail the agent is working on")
	case req.RelayKey == "":
		return nil, Invalid("relay_key", "relay_key is required (B-8.1)", "use the platform's permission id, or <session>:<tool>:<call id>")
	case len(req.RelayKey) > MaxRelayKey:
		return nil, Invalid("relay_key", fmt.Sprintf("relay_key is longer than %d bytes", MaxRelayKey), "")
	case len(req.Context) > MaxBodyBytes:
		return nil, Invalid("context", fmt.Sprintf("context is larger than %d bytes", MaxBodyBytes), "shorten it")
	case utf8.RuneCountInString(req.Tool) > MaxToolRunes:
		return nil, Invalid("tool", fmt.Sprintf("tool is longer than %d characters", MaxToolRunes), "")
	case utf8.RuneCountInString(req.Scope) > MaxScopeRunes:
		return nil, Invalid("scope", fmt.Sprintf("scope is longer than %d characters", MaxScopeRunes), "")
	}
	options := req.Options
	if len(options) == 0 {
		options = DefaultPermissionOptions
	}
	if len(options) > MaxOptions {
		return nil, Invalid("options", fmt.Sprintf("at most %d options", MaxOptions), "")
	}
	for i, o := range options {
		if strings.TrimSpace(o) == "" || utf8.RuneCountInString(o) > MaxOptionRunes {
			return nil, Invalid(fmt.Sprintf("options[%d]", i), fmt.Sprintf("an option is 1 to %d characters", MaxOptionRunes), "")
		}
	}
	optJSON, _ := json.Marshal(options)
	var argsHash string
	if req.Tool != "" || req.ToolInput != nil {
		h, err := ArgsHash(req.ToolInput)
		if err != nil {
			return nil, Invalid("tool_input", err.Error(), "send the tool's arguments as a JSON object")
		}
		argsHash = h
	}

	var out client.Permission
	err := s.Write(ctx, func(tx *Tx) error {
		if old, err := tx.PermissionByRelayKey(ctx, p.Name, req.RelayKey); err == nil {
			in, err := inTurnScope(ctx, tx.Q, p.Name, old.SessionID)
			if err != nil {
				return err
			}
			if !in {
				return Conflict("relay_key_used", "this relay_key was already used by another request of this agent",
					"use the platform's own permission id as relay_key")
			}
			out = permissionView(old)
			out.Duplicate = true
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if req.ExpiresAt != nil && !req.ExpiresAt.After(tx.Now) {
			return Invalid("expires_at", fmt.Sprintf("expires_at %s is not in the future (the server's time is %s)",
				req.ExpiresAt.UTC().Format(time.RFC3339), tx.Now.Format(time.RFC3339)), "leave it out, or give a later time")
		}
		sess, err := sessionFor(ctx, tx.Q, req.SessionID, p.Name)
		if err != nil {
			return err
		}
		if err := s.checkPendingPermissions(ctx, tx, sess); err != nil { // caps.go
			return err
		}
		if _, err := tx.RelayedMail(ctx, p.Name, req.RelayKey); err == nil {
			return Conflict("relay_key_used", "this relay_key was already used by another relay mail of this agent",
				"use the platform's own permission id as relay_key")
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		parts, err := tx.Participants(ctx, sess.SessionID)
		if err != nil {
			return err
		}
		var people []Party
		from := Party{Name: p.Name, Kind: store.KindAgent, Workspace: sess.Workspace}
		for _, pt := range parts {
			switch {
			case pt.Kind == store.KindPerson:
				people = append(people, Party{Name: pt.Name, Kind: store.KindPerson, Role: "to"})
			case pt.Name == p.Name:
				from.Workspace = pt.Workspace
			}
		}
		// In a delegated session the people of its origin chain decide too
		// (issue 12 point 1, delegation.go).
		others, err := originPeople(ctx, tx.Q, sess.SessionID)
		if err != nil {
			return err
		}
		for _, name := range others {
			if !hasParty(people, name) {
				people = append(people, Party{Name: name, Kind: store.KindPerson, Role: "to", Observer: true})
			}
		}
		if len(people) == 0 {
			return Conflict("no_person_to_decide",
				fmt.Sprintf("no person takes part in session %q, so nobody can decide this request", sess.Alias),
				"do not run the action; explain in your reply what you would do and why, or ask a person to join the session")
		}
		scope, err := requestScope(req.Scope, from.Workspace)
		if err != nil {
			return err
		}
		var expires *time.Time
		if req.ExpiresAt != nil {
			e := req.ExpiresAt.UTC().Truncate(time.Millisecond)
			expires = &e
		}
		words, _, err := wordsFor(ctx, tx.Q, partyNames(people)) // persontext.go
		if err != nil {
			return err
		}
		body := permissionMailBody(words, req, options, scope, argsHash, expires)
		// The request sits in the conversation tree under the mail the agent
		// is working on: the newest mail of the session addressed to it.
		parent, err := tx.LatestMailTo(ctx, sess.SessionID, p.Name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		created, err := s.CreateMailTx(ctx, tx, NewMail{Session: sess, From: from, ParentMailID: parent,
			Subject: permissionSubject(words, req), Body: body,
			MailType: client.MailTypePermissionRequest, Relay: client.RelayPermission, RelayKey: req.RelayKey,
			Recipients: people})
		if err != nil {
			return err
		}
		runID, err := tx.RunningRunOf(ctx, sess.SessionID, p.Name)
		if err != nil {
			return err
		}
		row := store.PermissionRow{MailID: created.Mail.MailID, SessionID: sess.SessionID, AgentName: p.Name,
			Question: req.Question, Options: string(optJSON), Context: req.Context, Tool: req.Tool, ArgsHash: argsHash,
			ToolSummary: ToolSummary(req.Tool, req.ToolInput), Scope: scope, RelayKey: req.RelayKey, ExpiresAt: expires, CreatedAt: tx.Now,
			RunID: runID}
		ok, err := tx.InsertPermissionRequest(ctx, row)
		if err != nil {
			return err
		}
		if !ok {
			return errPermissionReplay
		}
		if ok, err := tx.InsertRelay(ctx, p.Name, req.RelayKey, client.RelayPermission, created.Mail.MailID, tx.Now); err != nil {
			return err
		} else if !ok {
			return errPermissionReplay
		}
		out = permissionView(row)
		for _, person := range people {
			if _, err := tx.Emit(ctx, person.Name, client.EventPermissionRequest, out); err != nil {
				return err
			}
		}
		s.Log.Info("permission requested", "mail_id", row.MailID, "session_id", sess.SessionID, "agent", p.Name,
			"tool", req.Tool, "relay_key", req.RelayKey)
		return nil
	})
	if errors.Is(err, errPermissionReplay) {
		old, gerr := s.Read().PermissionByRelayKey(ctx, p.Name, req.RelayKey)
		if gerr != nil {
			return nil, gerr
		}
		out = permissionView(old)
		out.Duplicate = true
		return &out, nil
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// requestScope answers the scope a permission request shows: the agent's
// workspace in the session when the agent sends none, else the agent's
// scope, which must be the workspace or lie inside it (400 field scope). An
// agent without a workspace may not name a scope. Grants never take this
// value: their scope is the workspace (issue 12 point 3).
func requestScope(asked, workspace string) (string, error) {
	if asked == "" {
		return workspace, nil
	}
	clean := path.Clean(asked)
	if workspace != "" && (clean == workspace || strings.HasPrefix(clean, strings.TrimSuffix(workspace, "/")+"/")) {
		return clean, nil
	}
	where := fmt.Sprintf("the agent's workspace in this session (%s)", workspace)
	if workspace == "" {
		where = "a workspace, and the agent has none in this session"
	}
	return "", Invalid("scope", fmt.Sprintf("scope %q lies outside %s", asked, where),
		"leave scope out: a request is about the session's workspace")
}

// permissionSubject is a request mail's subject: "Permission request: "
// and what will run (ToolSummary of the tool and its arguments, as the
// gateway computes it), so that lists lead with the call and not with the
// agent's own words; the question's first line only when the request names
// neither tool nor input. w is the wording in the people's language.
func permissionSubject(w personWords, req client.PermissionRequest) string {
	what := ToolSummary(req.Tool, req.ToolInput)
	if what == "" {
		what = ShowInvisible(truncateRunes(firstLineOf(req.Question), 200))
	}
	return w.permSubject + ": " + what
}

// permissionMailBody is the Markdown body of a request mail (B-8.4). It
// leads with what the gateway knows will run: the tool summary, the tool,
// the exact arguments, the scope and the arguments' hash. The agent's own
// question and context follow, quoted and marked as the agent's words,
// since an agent can write a harmless question for a dangerous call. Then
// the expiry and how to answer, in w's language. Invisible format
// characters of the call (bidirectional controls) are shown as code points
// (ShowInvisible), so the call reads as what will run.
func permissionMailBody(w personWords, req client.PermissionRequest, options []string, scope, argsHash string, expires *time.Time) string {
	var b strings.Builder
	if what := ToolSummary(req.Tool, req.ToolInput); what != "" {
		fmt.Fprintf(&b, "%s\n\n%s", w.willRun, modeltext.CodeBlock("text", what)+"\n")
	} else {
		b.WriteString(w.noToolCall + "\n")
	}
	if req.Tool != "" {
		fmt.Fprintf(&b, "\n%s: %s\n", w.tool, modeltext.CodeSpan(ShowInvisible(req.Tool)))
	}
	if req.ToolInput != nil {
		if canon, err := CanonicalJSON(req.ToolInput); err == nil {
			const maxShown = 4000
			shown := jsonShowingInvisible(canon)
			if len(shown) > maxShown {
				shown = shown[:maxShown] + " …"
			}
			fmt.Fprintf(&b, "\n%s:\n\n%s", w.arguments, modeltext.CodeBlock("json", shown)+"\n")
		}
	}
	if scope != "" {
		fmt.Fprintf(&b, "\n%s: %s\n", w.scope, modeltext.CodeSpan(ShowInvisible(scope)))
	}
	if argsHash != "" {
		fmt.Fprintf(&b, "%s: `%s`\n", w.argsHash, argsHash)
	}
	b.WriteString("\n" + w.agentsWords + "\n\n")
	b.WriteString(quoted(req.Question))
	if strings.TrimSpace(req.Context) != "" {
		b.WriteString(">\n")
		b.WriteString(quoted(strings.TrimSpace(req.Context)))
	}
	if expires != nil {
		fmt.Fprintf(&b, "\n"+w.unansweredBy+"\n", expires.Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "\n"+w.howToAnswer+"\n", strings.Join(options, " / "))
	return b.String()
}

// quoted answers s as a Markdown block quote: every line, empty ones
// included, starts with "> ", so nothing in s ends the quote.
func quoted(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		b.WriteString(strings.TrimRight("> "+line, " "))
		b.WriteString("\n")
	}
	return b.String()
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// canDecide reports whether person (a person's username; callers check the
// kind) may see and decide the request: only when they may see its session
// (visibility.go mayViewSession: they take part in it) and the request
// mail reached them (they are one of its recipients: the people of the
// session when it was asked). Someone who joined the session later was
// never asked and did not see what the agent asked, so the API, a reply,
// the page and the CLI answer them, like everybody else, 404
// permission_not_found.
func canDecide(ctx context.Context, q *store.Q, row store.PermissionRow, person string) (bool, error) {
	ok, err := mayViewSession(ctx, q, row.SessionID, person)
	if err != nil || !ok {
		return false, err
	}
	v, err := q.ViewMail(ctx, row.MailID, person)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return v.Role != "", nil
}

// GetPermission answers one request: an agent sees its own requests, a
// person those they may decide. Anything else is a 404.
func (s *Service) GetPermission(ctx context.Context, p *Principal, mailID string) (*client.Permission, error) {
	q := s.Read()
	row, err := q.GetPermission(ctx, mailID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, permissionNotFound()
	}
	if err != nil {
		return nil, err
	}
	if p.IsAgent() {
		in, err := inTurnScope(ctx, q, p.Name, row.SessionID)
		if err != nil {
			return nil, err
		}
		if row.AgentName != p.Name || !in {
			return nil, permissionNotFound()
		}
	}
	if p.IsPerson() {
		ok, err := canDecide(ctx, q, row, p.Name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, permissionNotFound()
		}
	}
	v := permissionView(row)
	return &v, nil
}

// ListPermissions answers the requests addressed to a person ("waiting for
// you"), newest first; status is "pending" (default), "decided" or "all".
func (s *Service) ListPermissions(ctx context.Context, p *Principal, status string) (*client.PermissionList, error) {
	switch status {
	case "":
		status = store.PermissionPending
	case store.PermissionPending, store.PermissionDecided, store.PermissionAll:
	default:
		return nil, Invalid("status", fmt.Sprintf("status %q is not pending, decided or all", status), "")
	}
	rows, err := s.Read().PermissionsFor(ctx, p.Name, status, maxPermissionList)
	if err != nil {
		return nil, err
	}
	out := &client.PermissionList{Permissions: []client.Permission{}}
	for _, r := range rows {
		out.Permissions = append(out.Permissions, permissionView(r))
	}
	return out, nil
}

// SystemSender is the sender name of mails the gateway writes itself
// (timeouts).
const SystemSender = "agentmail"
