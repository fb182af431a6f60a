package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/agentmail/agentmail/client"
)

// maxSummaryArg bounds one argument in the ask's context line (B-8.4).
const maxSummaryArg = 300

// pendingAsk is one permission ask waiting for its decision (B-8 step 2,
// D-2.3: platform permission id → pending item).
type pendingAsk struct {
	answer chan PermissionAnswer // buffered 1
}

// permissions forwards the platform's own permission asks to a person
// (B-8) and routes decisions back (B-4.1). It is safe for concurrent use.
type permissions struct {
	gw    Gateway
	tier  Tier
	agent func() string
	log   *slog.Logger

	mu      sync.Mutex
	pending map[string][]*pendingAsk // relay_key → waiters (an ask replayed waits twice, one mail)
	closed  bool
	stop    chan struct{} // closed at shutdown: every waiter answers deny (B-9.2)
}

func newPermissions(gw Gateway, tier Tier, agent func() string, log *slog.Logger) *permissions {
	return &permissions{gw: gw, tier: tier, agent: agent, log: log,
		pending: map[string][]*pendingAsk{}, stop: make(chan struct{})}
}

// deny builds a fail-closed answer whose message tells the model why.
func deny(msg string) PermissionAnswer { return PermissionAnswer{Allow: false, Message: msg} }

// askScope is the turn an ask belongs to.
type askScope struct {
	sessionID string // mail session
	mailID    string
	workspace string // grant scope
}

// funcFor returns the TurnRequest.Permission of one turn.
func (p *permissions) funcFor(sc askScope) PermissionFunc {
	return func(ctx context.Context, ask PermissionAsk) PermissionAnswer {
		return p.ask(ctx, sc, ask)
	}
}

// ask implements B-8 with the tiers of seed 003:
//   - plan: deny without asking anyone;
//   - full: allow without asking;
//   - workspace: allow when an "always allow" grant covers tool + workspace,
//     else POST /permission/request with relay_key = the platform's id
//     (B-8.1), context = tool and argument summary (B-8.4), tool and
//     tool_input, and wait for the permission_decision event.
//
// Every session the core drives is mail-driven, without a local screen to
// fall back to, so a failed forward answers deny with the gateway's reason
// (fail closed; B-8.2's hand-over to a local UI has nobody to hand over to).
// Shutdown and the end of ctx also answer deny (B-9.2, N-9).
func (p *permissions) ask(ctx context.Context, sc askScope, ask PermissionAsk) PermissionAnswer {
	log := p.log.With("session_id", sc.sessionID, "mail_id", sc.mailID, "tool", ask.ToolName, "relay_key", ask.PlatformID)
	switch p.tier {
	case TierPlan:
		log.Info("permission ask refused without asking: tier plan")
		return deny(fmt.Sprintf("Refused: this agent runs in the plan tier, where %s may not run. Describe the change instead of making it.", ask.ToolName))
	case TierFull:
		log.Info("permission ask allowed: tier full")
		return PermissionAnswer{Allow: true, Standing: AllowedByTier}
	}
	if ask.PlatformID == "" {
		log.Error("permission ask without a platform id: refused (B-8.1 needs one)")
		return deny("Refused: the platform gave this permission ask no id, so no decision could be matched to it.")
	}
	if p.granted(ctx, sc.sessionID, ask.ToolName, sc.workspace) {
		log.Info("permission ask allowed by an always-allow grant", "scope", sc.workspace)
		return PermissionAnswer{Allow: true, Standing: AllowedByGrant}
	}
	w := &pendingAsk{answer: make(chan PermissionAnswer, 1)}
	if !p.add(ask.PlatformID, w) {
		return deny("Refused: the bridge is shutting down.")
	}
	defer p.remove(ask.PlatformID, w)

	summary := AskSummary(ask)
	req := client.PermissionRequest{
		Question:  fmt.Sprintf("Allow %s to run %s?", p.agent(), summary),
		Context:   summary,
		SessionID: sc.sessionID,
		RelayKey:  ask.PlatformID,
		Tool:      ask.ToolName,
		ToolInput: ask.Input,
		Scope:     sc.workspace,
	}
	perm, err := p.gw.RequestPermission(ctx, req)
	if err != nil {
		log.Warn("permission ask could not be forwarded: refused (fail closed)", "err", err)
		return deny("Refused: the permission request could not reach a person: " + gatewayReason(err))
	}
	log.Info("permission ask forwarded", "permission_mail_id", perm.MailID)
	if perm.Status == "approved" || perm.Status == "denied" {
		// A replay of an ask that was decided already (B-8.3).
		return PermissionAnswer{Allow: perm.Approved, Message: decisionMessage(perm.Approved, perm.Decision, perm.Note)}
	}
	select {
	case a := <-w.answer:
		return a
	case <-ctx.Done():
		return deny("Refused: the turn ended before a person decided.")
	case <-p.stop:
		return deny("Refused: the bridge stopped before a person decided.")
	}
}

// granted asks the gateway for an "always allow" grant that applies in the
// session (the gateway decides whose grants count there); any error means
// no. The grant must also name this tool and the turn's workspace.
func (p *permissions) granted(ctx context.Context, sessionID, tool, scope string) bool {
	if tool == "" || sessionID == "" {
		return false
	}
	gl, err := p.gw.Grants(ctx, sessionID, tool)
	if err != nil || gl == nil {
		return false
	}
	for _, g := range gl.Grants {
		if g.Tool == tool && g.Scope == scope {
			return true
		}
	}
	return false
}

func (p *permissions) add(key string, w *pendingAsk) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.pending[key] = append(p.pending[key], w)
	return true
}

func (p *permissions) remove(key string, w *pendingAsk) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ws := p.pending[key]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(p.pending, key)
	} else {
		p.pending[key] = ws
	}
}

// decide answers the asks waiting under ev.RelayKey (B-4.1) and reports
// whether any waited. false sends the caller to the B-4.2 fallback.
func (p *permissions) decide(ev client.PermissionDecisionEvent) bool {
	p.mu.Lock()
	ws := p.pending[ev.RelayKey]
	delete(p.pending, ev.RelayKey)
	p.mu.Unlock()
	a := PermissionAnswer{Allow: ev.Approved, Message: decisionMessage(ev.Approved, ev.Decision, ev.Note)}
	for _, w := range ws {
		select {
		case w.answer <- a:
		default:
		}
	}
	return len(ws) > 0
}

// shutdown makes every waiting and future ask answer deny (B-9.2).
func (p *permissions) shutdown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.stop)
	}
}

// waiting is the number of asks waiting for a decision (tests, logs).
func (p *permissions) waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ws := range p.pending {
		n += len(ws)
	}
	return n
}

func decisionMessage(approved bool, decision, note string) string {
	if approved {
		if note != "" {
			return "Approved by a person: " + note
		}
		return ""
	}
	msg := "Denied by a person"
	if decision != "" {
		msg += fmt.Sprintf(" (%q)", decision)
	}
	if note != "" {
		msg += ": " + note
	}
	return msg + "."
}

// gatewayReason renders a gateway error for the model: the gateway's error
// and suggestion when it answered, else the transport error (D-7.3).
func gatewayReason(err error) string {
	var ae *client.APIError
	if errors.As(err, &ae) {
		s := ae.Body.Error
		if ae.Body.Suggestion != "" {
			s += " (" + ae.Body.Suggestion + ")"
		}
		if s != "" {
			return s
		}
	}
	return err.Error()
}

// AskSummary is the one-line context of a permission mail (B-8.4): the
// adapter's own summary when it gave one, else the tool name and its
// arguments, each argument cut to 300 characters, keys sorted.
func AskSummary(ask PermissionAsk) string {
	if s := strings.TrimSpace(ask.Summary); s != "" {
		return s
	}
	keys := make([]string, 0, len(ask.Input))
	for k := range ask.Input {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := ask.Input[k].(type) {
		case string:
			v = x
		default:
			b, _ := json.Marshal(x)
			v = string(b)
		}
		if r := []rune(v); len(r) > maxSummaryArg {
			v = string(r[:maxSummaryArg]) + "…"
		}
		parts = append(parts, k+"="+v)
	}
	tool := nonEmpty(ask.ToolName, "a tool")
	if len(parts) == 0 {
		return tool
	}
	return tool + " " + strings.Join(parts, ", ")
}
