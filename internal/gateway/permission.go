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

	// DecidedByTimeout is decided_by of a request the clock decided.
	DecidedByTimeout = "timeout"
	// TimeoutDecision is the decision word of a timed-out request.
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

func init() {
	Extend(func(s *Service) {
		s.Hooks.Permissions = s.permissionsHook
		s.Hooks.PendingPermissions = func(ctx context.Context, q *store.Q, username string) (int, error) {
			return q.CountPendingPermissionsFor(ctx, username)
		}
		s.Hooks.SessionPendingPermissions = func(ctx context.Context, q *store.Q, sessionID string) (int, error) {
			return q.CountPendingPermissionsInSession(ctx, sessionID)
		}
		s.Hooks.AfterMail = append(s.Hooks.AfterMail, s.permissionReplyHook)
	})
}

// permissionView converts a stored request to its API form. ToolSummary
// is the stored one, or the tool name for a request stored without one.
func permissionView(row store.PermissionRow) client.Permission {
	summary := row.ToolSummary
	if summary == "" {
		summary = ToolSummary(row.Tool, nil)
	}
	p := client.Permission{MailID: row.MailID, SessionID: row.SessionID, AgentName: row.AgentName,
		Question: row.Question, Options: []string{}, Context: row.Context, Tool: row.Tool, ArgsHash: row.ArgsHash,
		ToolSummary: summary, RelayKey: row.RelayKey, Status: PermissionStatusPending, ExpiresAt: row.ExpiresAt, CreatedAt: row.CreatedAt}
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

func (s *Service) permissionsHook(ctx context.Context, q *store.Q, mailIDs []string) (map[string]*client.Permission, error) {
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
// taking part in the session, and emits a permission_request event to each.
//
// Rules: question, session_id and relay_key are required; the agent must
// take part in the session (else 404). The request never uses a round
// (B-8.5). It is idempotent on (agent, relay_key) (B-8.3): a replay answers
// the stored request with Duplicate true and stores nothing. No person in
// the session → 409 "no_person_to_decide" with a suggestion (seed 003).
// Options default to DefaultPermissionOptions; the canonical hash of
// tool_input is stored as args_hash and ToolSummary(tool, tool_input) as
// tool_summary; scope defaults to the agent's path in the session and must
// lie inside it (requestScope);
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
			if !inTurnScope(ctx, p.Name, old.SessionID) {
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
		body := permissionMailBody(req, options, scope, argsHash, expires)
		// The request sits in the conversation tree under the mail the agent
		// is working on: the newest mail of the session addressed to it.
		parent, err := tx.LatestMailTo(ctx, sess.SessionID, p.Name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		created, err := s.CreateMailTx(ctx, tx, NewMail{Session: sess, From: from, ParentMailID: parent,
			Subject: permissionSubject(req), Body: body,
			MailType: client.MailTypePermissionRequest, Relay: client.RelayPermission, RelayKey: req.RelayKey,
			Recipients: people})
		if err != nil {
			return err
		}
		row := store.PermissionRow{MailID: created.Mail.MailID, SessionID: sess.SessionID, AgentName: p.Name,
			Question: req.Question, Options: string(optJSON), Context: req.Context, Tool: req.Tool, ArgsHash: argsHash,
			ToolSummary: ToolSummary(req.Tool, req.ToolInput), Scope: scope, RelayKey: req.RelayKey, ExpiresAt: expires, CreatedAt: tx.Now}
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
// neither tool nor input.
func permissionSubject(req client.PermissionRequest) string {
	what := ToolSummary(req.Tool, req.ToolInput)
	if what == "" {
		what = truncateRunes(firstLineOf(req.Question), 200)
	}
	return "Permission request: " + what
}

// permissionMailBody is the Markdown body of a request mail (B-8.4). It
// leads with what the gateway knows will run: the tool summary, the tool,
// the exact arguments, the scope and the arguments' hash. The agent's own
// question and context follow, quoted and marked as the agent's words,
// since an agent can write a harmless question for a dangerous call. Then
// the expiry and how to answer.
func permissionMailBody(req client.PermissionRequest, options []string, scope, argsHash string, expires *time.Time) string {
	var b strings.Builder
	if what := ToolSummary(req.Tool, req.ToolInput); what != "" {
		fmt.Fprintf(&b, "**Will run:**\n\n%s", fenced("text", what))
	} else {
		b.WriteString("**The agent names no tool call**: nothing below says what would run; only its own words do.\n")
	}
	if req.Tool != "" {
		fmt.Fprintf(&b, "\nTool: %s\n", inlineCode(req.Tool))
	}
	if req.ToolInput != nil {
		if canon, err := CanonicalJSON(req.ToolInput); err == nil {
			const maxShown = 4000
			shown := string(canon)
			if len(shown) > maxShown {
				shown = shown[:maxShown] + " …"
			}
			fmt.Fprintf(&b, "\nArguments:\n\n%s", fenced("json", shown))
		}
	}
	if scope != "" {
		fmt.Fprintf(&b, "\nScope: %s\n", inlineCode(scope))
	}
	if argsHash != "" {
		fmt.Fprintf(&b, "Arguments hash: `%s`\n", argsHash)
	}
	b.WriteString("\nThe agent's own words (not checked by AgentMail):\n\n")
	b.WriteString(quoted(req.Question))
	if strings.TrimSpace(req.Context) != "" {
		b.WriteString(">\n")
		b.WriteString(quoted(strings.TrimSpace(req.Context)))
	}
	if expires != nil {
		fmt.Fprintf(&b, "\nUnanswered by %s, it is denied.\n", expires.Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "\nOptions: %s. Reply with 同意 / approve / yes to allow once, 一直同意 / always to allow this tool "+
		"in this scope from now on; any other answer denies.\n", strings.Join(options, " / "))
	return b.String()
}

// fenced answers s as a Markdown code block with the info string lang,
// fenced by more backticks than s holds in a row, so s cannot close it.
func fenced(lang, s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + lang + "\n" + s + "\n" + fence + "\n"
}

// inlineCode answers s as a Markdown code span that s cannot close.
func inlineCode(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func longestRun(s string, c rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
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
// (visibility.go mayViewSession: they take part in it). The request mail
// goes to exactly those people, so the API, a reply, the page and the CLI
// answer everybody else 404 permission_not_found.
func canDecide(ctx context.Context, q *store.Q, row store.PermissionRow, person string) (bool, error) {
	return mayViewSession(ctx, q, row.SessionID, person)
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
	if p.IsAgent() && (row.AgentName != p.Name || !inTurnScope(ctx, p.Name, row.SessionID)) {
		return nil, permissionNotFound()
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

// decisionInput is one decision about to be recorded.
type decisionInput struct {
	word      string // as written
	note      string
	decidedBy string
	via       string
	// mailID is the decision mail when it exists already (a reply); empty
	// makes decideTx write one.
	mailID string
	from   Party
}

// Decide records a person's decision from the API (POST
// /me/permission/{mail_id}/decide). Only an approval word approves
// (JudgeDecision); "always"/"一直同意" also stores a grant for agent + tool
// + scope. The decision is a mail_type=permission_decision mail to the agent
// in the request's thread, and the agent (and the people asked) get a
// permission_decision event with the W-4 fields.
//
// The first decision wins (a primary key): a later one answers 409
// "already_decided", except the very same decision by the same person,
// which answers the stored state again. A request past its expires_at
// answers 409 "permission_expired" (the sweeper denies it). A request the
// person may not decide is a 404.
func (s *Service) Decide(ctx context.Context, p *Principal, mailID string, req client.DecideRequest) (*client.Permission, error) {
	if !p.IsPerson() {
		return nil, Forbidden("person_only", "only a person decides a permission request", "")
	}
	word := strings.TrimSpace(req.Decision)
	if utf8.RuneCountInString(word) > MaxDecisionRunes {
		return nil, Invalid("decision", fmt.Sprintf("decision is longer than %d characters", MaxDecisionRunes), "put the reason in note")
	}
	if len(req.Note) > MaxBodyBytes {
		return nil, Invalid("note", fmt.Sprintf("note is larger than %d bytes", MaxBodyBytes), "")
	}
	var out *client.Permission
	err := s.Write(ctx, func(tx *Tx) error {
		row, err := tx.GetPermission(ctx, mailID)
		if errors.Is(err, store.ErrNotFound) {
			return permissionNotFound()
		}
		if err != nil {
			return err
		}
		ok, err := canDecide(ctx, tx.Q, row, p.Name)
		if err != nil {
			return err
		}
		if !ok {
			return permissionNotFound()
		}
		if row.Decided {
			if row.DecidedBy == p.Name && row.Decision == word && row.Note == strings.TrimSpace(req.Note) {
				v := permissionView(row)
				out = &v
				return nil
			}
			return alreadyDecided(row)
		}
		if row.ExpiresAt != nil && !row.ExpiresAt.After(tx.Now) {
			return Conflict("permission_expired", fmt.Sprintf("the request expired at %s and is denied", row.ExpiresAt.Format(time.RFC3339)),
				"the agent has to ask again")
		}
		out, err = s.decideTx(ctx, tx, row, decisionInput{word: word, note: strings.TrimSpace(req.Note), decidedBy: p.Name,
			via: DecidedViaAPI, from: Party{Name: p.Name, Kind: store.KindPerson}})
		return err
	})
	if errors.Is(err, errDecisionLost) {
		row, gerr := s.Read().GetPermission(ctx, mailID)
		if gerr != nil {
			return nil, gerr
		}
		return nil, alreadyDecided(row)
	}
	return out, err
}

func alreadyDecided(row store.PermissionRow) error {
	verdict := "denied"
	if row.Approved {
		verdict = "approved"
	}
	return Conflict("already_decided", fmt.Sprintf("this request was already %s by %s (%q); the first decision stands",
		verdict, row.DecidedBy, row.Decision), "read the request again (GET its permission) instead of deciding twice")
}

// decideTx records a decision in the transaction: the decision mail (unless
// in.mailID names an existing one), the decision row (first wins: a lost
// race returns errDecisionLost so the caller rolls back), the grant for an
// "always", and the permission_decision events.
func (s *Service) decideTx(ctx context.Context, tx *Tx, row store.PermissionRow, in decisionInput) (*client.Permission, error) {
	approved, always := JudgeDecision(in.word)
	if in.via == DecidedViaTimeout {
		approved, always = false, false
	}
	sess, err := tx.GetSession(ctx, row.SessionID)
	if err != nil {
		return nil, err
	}
	agentWS := ""
	if pt, err := tx.Participant(ctx, sess.SessionID, row.AgentName); err == nil {
		agentWS = pt.Workspace
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	decisionMailID := in.mailID
	if decisionMailID == "" {
		reqMail, err := tx.GetMail(ctx, row.MailID)
		if err != nil {
			return nil, err
		}
		created, err := s.CreateMailTx(ctx, tx, NewMail{Session: sess, ParentMailID: row.MailID, From: in.from,
			Subject: replySubject(reqMail.Subject), Body: decisionMailBody(in, approved, always, row, agentWS),
			MailType:   client.MailTypePermissionDecision,
			Recipients: []Party{{Name: row.AgentName, Kind: store.KindAgent, Workspace: agentWS, Role: "to"}}})
		if err != nil {
			return nil, err
		}
		decisionMailID = created.Mail.MailID
	}
	d := store.PermissionDecisionRow{MailID: row.MailID, Decision: in.word, Approved: approved, Always: always,
		Note: in.note, DecidedBy: in.decidedBy, DecidedVia: in.via, DecisionMailID: decisionMailID, DecidedAt: tx.Now}
	ok, err := tx.InsertPermissionDecision(ctx, d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errDecisionLost
	}
	if always && grantable(row, agentWS) {
		// The grant's scope is the agent's workspace in the session as the
		// gateway knows it, never the scope the agent sent.
		if _, err := tx.InsertGrant(ctx, store.GrantRow{GrantID: store.NewID(), AgentName: row.AgentName, Tool: row.Tool,
			Scope: agentWS, SessionID: row.SessionID, GrantedBy: in.decidedBy, MailID: row.MailID, CreatedAt: tx.Now}); err != nil {
			return nil, err
		}
	}
	row.Decided, row.Decision, row.Approved, row.Always, row.Note = true, d.Decision, approved, always, d.Note
	row.DecidedBy, row.DecidedVia, row.DecisionMailID = d.DecidedBy, d.DecidedVia, decisionMailID
	at := tx.Now
	row.DecidedAt = &at
	ev := client.PermissionDecisionEvent{MailID: row.MailID, DecisionMailID: decisionMailID, Decision: d.Decision,
		Approved: approved, Always: always, Note: d.Note, DecidedBy: d.DecidedBy, SessionID: row.SessionID,
		RelayKey: row.RelayKey, RelayKind: client.RelayPermission, ArgsHash: row.ArgsHash}
	recipients := []string{row.AgentName}
	rs, err := tx.RecipientsOf(ctx, []string{row.MailID})
	if err != nil {
		return nil, err
	}
	for _, r := range rs[row.MailID] {
		if r.Kind == store.KindPerson {
			recipients = append(recipients, r.Name)
		}
	}
	for _, name := range recipients {
		if _, err := tx.Emit(ctx, name, client.EventPermissionDecision, ev); err != nil {
			return nil, err
		}
	}
	s.Log.Info("permission decided", "mail_id", row.MailID, "session_id", row.SessionID, "agent", row.AgentName,
		"approved", approved, "always", always, "decided_by", d.DecidedBy, "via", d.DecidedVia)
	v := permissionView(row)
	return &v, nil
}

// decisionMailBody is the body of a decision mail written by the gateway
// (API decisions and timeouts): the verdict, then, for a person's answer,
// what the gateway understood and why (ReadDecision), then the note.
func decisionMailBody(in decisionInput, approved, always bool, row store.PermissionRow, agentWS string) string {
	var b strings.Builder
	switch {
	case in.via == DecidedViaTimeout:
		b.WriteString("Denied: nobody decided before the request expired.")
	case always && grantable(row, agentWS):
		fmt.Fprintf(&b, "Approved, always: %s may use `%s` in `%s` from now on, without asking, in sessions where %s is the only person.",
			row.AgentName, row.Tool, agentWS, in.decidedBy)
	case always:
		b.WriteString("Approved once: no always-allow grant was stored, because the request names no tool or the agent has no workspace in this session.")
	case approved:
		b.WriteString("Approved.")
	default:
		b.WriteString("Denied.")
	}
	if in.via != DecidedViaTimeout {
		fmt.Fprintf(&b, "\nThe answer %q was %s.", in.word, ReadDecision(in.word).Reason)
	}
	if in.note != "" {
		b.WriteString("\n\n")
		b.WriteString(in.note)
	}
	b.WriteString("\n")
	return b.String()
}

// permissionReplyHook makes a person's reply to a pending permission
// request its decision (issue 3: "or by replying to the request mail"): the
// reply's text is judged by JudgeDecision (its first line is the decision
// word, the rest the note), the reply becomes the permission_decision mail
// of the thread, and the events go out as for an API decision. A reply by
// someone who may not decide stays an ordinary mail. A reply by someone who
// may decide to a request already decided (or expired) is a second
// decision: with the same verdict (approve / always / deny) it stays an
// ordinary mail; with another it fails the send with 409 already_decided
// (permission_expired for an approval after the expiry), storing nothing.
func (s *Service) permissionReplyHook(ctx context.Context, tx *Tx, m *CreatedMail) error {
	if m.Mail.FromKind != store.KindPerson || m.Mail.ParentMailID == "" || m.Mail.MailType != client.MailTypeNormal || m.Forward {
		return nil // a forward of the request is not an answer to it
	}
	row, err := tx.GetPermission(ctx, m.Mail.ParentMailID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	ok, err := canDecide(ctx, tx.Q, row, m.Mail.FromName)
	if err != nil || !ok {
		return err
	}
	word, note := splitDecisionText(m.Mail.Body)
	expired := row.ExpiresAt != nil && !row.ExpiresAt.After(tx.Now)
	if row.Decided || expired {
		// A second decision: the same verdict stays an ordinary mail; a
		// different one is refused like a second API decision (409), and
		// the reply is not stored.
		approved, always := JudgeDecision(word)
		switch {
		case row.Decided && approved == row.Approved && always == row.Always:
			return nil
		case row.Decided:
			return alreadyDecided(row)
		case !approved:
			return nil // agrees with the denial the expiry brings
		default:
			return Conflict("permission_expired", fmt.Sprintf("the request expired at %s and is denied; the reply was not sent",
				row.ExpiresAt.Format(time.RFC3339)), "the agent has to ask again")
		}
	}
	if _, err := s.decideTx(ctx, tx, row, decisionInput{word: word, note: note, decidedBy: m.Mail.FromName,
		via: DecidedViaReply, mailID: m.Mail.MailID}); err != nil {
		return err
	}
	// The reply is the decision mail: retype it and the new_mail events
	// already written for it, so bridges do not start a turn on it, and
	// end it with the gateway's reading of it, so the person and the agent
	// read what was understood and why.
	if err := tx.SetMailType(ctx, m.Mail.MailID, client.MailTypePermissionDecision); err != nil {
		return err
	}
	m.Mail.MailType = client.MailTypePermissionDecision
	m.Mail.Body = replyWithReading(m.Mail.Body, word)
	if err := tx.SetMailBody(ctx, m.Mail.MailID, m.Mail.Body); err != nil {
		return err
	}
	for _, id := range m.EventIDs {
		data, err := tx.EventData(ctx, id)
		if err != nil {
			return err
		}
		var ev client.NewMailEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return err
		}
		ev.MailType = client.MailTypePermissionDecision
		b, _ := json.Marshal(ev)
		if err := tx.SetEventData(ctx, id, b); err != nil {
			return err
		}
	}
	return nil
}

// replyWithReading is a decision reply's body followed by the gateway's
// reading of its decision word, set apart as the gateway's own line:
// "— AgentMail: \"yes, no need to ask again\" was understood as a denial:
// the first line starts with \"yes\" but also says \"no\"; ...".
func replyWithReading(body, word string) string {
	return strings.TrimRight(body, " \t\r\n") + fmt.Sprintf("\n\n— %s: %q was %s.\n", SystemSender, word, ReadDecision(word).Reason)
}

// splitDecisionText splits a reply into its decision word (the first
// non-empty line, quoted lines skipped) and the note (the rest, without
// quoted lines).
func splitDecisionText(body string) (word, note string) {
	var rest []string
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, ">") {
			continue
		}
		if word == "" {
			if t != "" {
				word = t
			}
			continue
		}
		rest = append(rest, line)
	}
	word = string([]rune(word)[:min(utf8.RuneCountInString(word), MaxDecisionRunes)])
	return word, strings.TrimSpace(strings.Join(rest, "\n"))
}

// ExpirePermissions decides every pending request whose expires_at has
// passed (by the service clock) as denied, decided_by "timeout", with a
// decision mail from the system and the permission_decision events, so
// nothing waits forever. A request decided meanwhile is left alone. It
// answers how many it decided.
func (s *Service) ExpirePermissions(ctx context.Context) (int, error) {
	rows, err := s.Read().ExpiredPermissions(ctx, s.Now(), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		err := s.Write(ctx, func(tx *Tx) error {
			row, err := tx.GetPermission(ctx, r.MailID)
			if err != nil {
				return err
			}
			if row.Decided {
				return nil
			}
			_, err = s.decideTx(ctx, tx, row, decisionInput{word: TimeoutDecision,
				note:      fmt.Sprintf("No decision before %s.", row.ExpiresAt.Format(time.RFC3339)),
				decidedBy: DecidedByTimeout, via: DecidedViaTimeout, from: Party{Name: SystemSender, Kind: store.KindSystem}})
			if err == nil {
				n++
			}
			return err
		})
		if err != nil && !errors.Is(err, errDecisionLost) {
			return n, err
		}
	}
	return n, nil
}

// SystemSender is the sender name of mails the gateway writes itself
// (timeouts).
const SystemSender = "agentmail"
