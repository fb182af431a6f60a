package mcptools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmail/agentmail/client"
)

// Tier is the permission tier of a session (seed 003 section 2): how the
// execution gate treats run_command and write_file.
type Tier string

// The three permission tiers.
const (
	// TierPlan refuses every gated call without asking anyone: a refusal
	// that is certain must not take a person's attention.
	TierPlan Tier = "plan"
	// TierWorkspace asks the person by mail for each call and waits; only an
	// explicit approval (or an always-allow grant for the tool and scope)
	// lets the call run. It is the default.
	TierWorkspace Tier = "workspace"
	// TierFull runs every gated call: the sender gave full power.
	TierFull Tier = "full"
)

// ParseTier reads AGENTMAIL_PERMISSION_MODE: "plan", "workspace" or "full"
// (case-insensitive, surrounding space ignored); "" is TierWorkspace. Any
// other value is an error naming the accepted values.
func ParseTier(s string) (Tier, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return TierWorkspace, nil
	case "plan":
		return TierPlan, nil
	case "workspace":
		return TierWorkspace, nil
	case "full":
		return TierFull, nil
	}
	return TierPlan, fmt.Errorf("AGENTMAIL_PERMISSION_MODE %q is not a permission tier: use plan, workspace or full", s)
}

// PermissionAPI is the part of the gateway the gate talks to (the
// client.Client methods of the same names): W-6 permission requests, their
// state, and the always-allow grants.
type PermissionAPI interface {
	RequestPermission(ctx context.Context, req client.PermissionRequest) (*client.Permission, error)
	GetPermission(ctx context.Context, mailID string) (*client.Permission, error)
	Grants(ctx context.Context, sessionID, tool string) (*client.GrantList, error)
}

// Default wait bounds of the gate.
const (
	// DefaultPermissionWait is how long a gated call waits for a person's
	// decision before it counts as denied (seed 003: 9 minutes).
	DefaultPermissionWait = 9 * time.Minute
	// DefaultPollInterval is how often the gate asks the gateway whether the
	// person has decided.
	DefaultPollInterval = time.Second
	// DefaultProgressEvery is how often a waiting gated call reports
	// progress.
	DefaultProgressEvery = 15 * time.Second
)

type progressKey struct{}

// WithProgress returns a context carrying fn, which the gate calls with a
// short message when it has asked a person and then regularly while it
// waits (the MCP layer turns it into notifications/progress when the
// client asked for progress).
func WithProgress(ctx context.Context, fn func(msg string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func reportProgress(ctx context.Context, msg string) {
	if fn, ok := ctx.Value(progressKey{}).(func(string)); ok && fn != nil {
		fn(msg)
	}
}

// Refusal is the error of a gated call that must not run. Reason is
// written for the model: what happened and what it can do instead. Asked
// tells whether a person was asked (false for refusals decided before
// asking: plan tier, protected paths, no session).
type Refusal struct {
	Reason string
	Asked  bool
}

// Error returns the reason, as the model reads it.
func (r *Refusal) Error() string { return r.Reason }

func refuse(asked bool, format string, args ...any) *Refusal {
	return &Refusal{Reason: fmt.Sprintf(format, args...), Asked: asked}
}

// Gate is the execution gate of seed 003 section 2. It decides whether one
// call of run_command or write_file may run; it never runs anything itself.
// Protected-path checks happen in the tools before Authorize, so they never
// reach a person.
type Gate struct {
	// API is the gateway (a *client.Client with the agent key).
	API PermissionAPI
	// Tier is the session's permission tier.
	Tier Tier
	// SessionID is the mail session (AGENTMAIL_SESSION_ID). Without it a
	// workspace-tier call has nobody to ask and is refused.
	SessionID string
	// Scope is the grant scope, the session's workspace directory.
	Scope string
	// Wait bounds the wait for a decision (0: DefaultPermissionWait).
	Wait time.Duration
	// PollInterval is the pause between two state reads (0:
	// DefaultPollInterval).
	PollInterval time.Duration
	// ProgressEvery is how often a waiting call reports progress to the
	// platform (0: DefaultProgressEvery), so that clients that reset their
	// tool timeout on progress keep waiting with the person.
	ProgressEvery time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Log receives one line per decision (nil: slog.Default()).
	Log *slog.Logger

	nonceOnce sync.Once
	nonceVal  string
	calls     atomic.Uint64
}

// Approval says why a gated call may run: "tier full", "always-allow grant
// <id>", or "approved by <person>".
type Approval struct {
	Via string
}

// GateRequest describes one gated call for the person who decides.
type GateRequest struct {
	// Tool is "run_command" or "write_file".
	Tool string
	// Input is the exact call; the gateway hashes it and a decision applies
	// only to that hash.
	Input map[string]any
	// Question is the one-line question in the permission mail.
	Question string
	// Context shows the command or path (and a preview) to the person.
	Context string
}

func (g *Gate) log() *slog.Logger {
	if g.Log != nil {
		return g.Log
	}
	return slog.Default()
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// nonce is a random per-process value so that relay keys of two processes
// never collide: a decision given to one call can never be replayed for
// another call that happens to look the same.
func (g *Gate) nonce() string {
	g.nonceOnce.Do(func() {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		g.nonceVal = hex.EncodeToString(b)
	})
	return g.nonceVal
}

// relayKey returns the stable id of one gated call (W-6 relay_key): a hash
// of the session, the tool, the canonical input, a per-process random value
// and a per-process call counter. The model cannot choose it (W-5.1), and
// two calls never share one, so one approval lets exactly one call run.
func (g *Gate) relayKey(tool string, input map[string]any, n uint64) string {
	canon, _ := json.Marshal(input) // map keys are sorted by encoding/json
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d", g.SessionID, tool, canon, g.nonce(), n)
	return "gate:" + hex.EncodeToString(h.Sum(nil))[:40]
}

// Authorize decides one gated call. It returns the reason the call may run,
// or a *Refusal:
//   - plan: refused without asking anyone;
//   - full: allowed;
//   - workspace: allowed by an always-allow grant for (tool, Scope), else a
//     permission request is sent (W-6) and the gate waits at most Wait for
//     the decision; only the gateway's verdict approved=true runs anything
//     (any other decision, a timeout, a cancelled call, a decision carrying
//     another relay key are denials). A 4xx answer (409: no person can
//     decide) refuses with the gateway's error and suggestion; a 5xx or
//     network failure refuses too (fail closed: a mail-driven session has
//     no local screen to fall back to).
func (g *Gate) Authorize(ctx context.Context, req GateRequest) (Approval, error) {
	switch g.Tier {
	case TierFull:
		g.log().Info("gate: allowed by tier full", "tool", req.Tool, "session_id", g.SessionID)
		return Approval{Via: "permission tier full"}, nil
	case TierWorkspace:
	default:
		g.log().Info("gate: refused by tier plan", "tool", req.Tool, "session_id", g.SessionID)
		return Approval{}, refuse(false, "%s is refused in permission tier plan (nobody was asked): nothing was run or written. Describe the change you would make in your reply instead.", req.Tool)
	}
	if g.SessionID == "" {
		return Approval{}, refuse(false, "%s needs a person's approval in permission tier workspace, but this tool server has no mail session (AGENTMAIL_SESSION_ID is empty), so there is nobody to ask: nothing was run or written.", req.Tool)
	}

	if gl, err := g.API.Grants(ctx, g.SessionID, req.Tool); err == nil {
		for _, gr := range gl.Grants {
			if gr.Tool == req.Tool && gr.Scope == g.Scope {
				g.log().Info("gate: allowed by grant", "tool", req.Tool, "grant_id", gr.GrantID, "session_id", g.SessionID)
				return Approval{Via: fmt.Sprintf("always-allow grant %s (given by %s for %s in %s)", gr.GrantID, gr.GrantedBy, gr.Tool, gr.Scope)}, nil
			}
		}
	} else {
		// No grant known: ask, which is the safe direction.
		g.log().Warn("gate: grant lookup failed; asking instead", "tool", req.Tool, "err", err)
	}

	wait := g.Wait
	if wait <= 0 {
		wait = DefaultPermissionWait
	}
	key := g.relayKey(req.Tool, req.Input, g.calls.Add(1))
	expires := g.now().Add(wait).UTC()
	p, err := g.API.RequestPermission(ctx, client.PermissionRequest{
		Question:  req.Question,
		Context:   req.Context,
		SessionID: g.SessionID,
		RelayKey:  key,
		Tool:      req.Tool,
		ToolInput: req.Input,
		Scope:     g.Scope,
		ExpiresAt: &expires,
	})
	if err != nil {
		return Approval{}, g.requestFailure(req.Tool, "ask a person", err)
	}
	g.log().Info("gate: asked a person", "tool", req.Tool, "mail_id", p.MailID, "relay_key", key, "session_id", g.SessionID)

	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	interval := g.PollInterval
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	every := g.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	asked := g.now()
	lastProgress := asked
	reportProgress(ctx, fmt.Sprintf("%s: asked a person by mail (permission mail %s); waiting at most %s for the decision", req.Tool, p.MailID, wait))
	var lastErr error
	for {
		if p != nil && p.Status != "" && p.Status != "pending" {
			return g.verdict(req.Tool, key, p)
		}
		if now := g.now(); now.Sub(lastProgress) >= every {
			lastProgress = now
			reportProgress(ctx, fmt.Sprintf("%s: still waiting for the person's decision on permission mail %s (%s so far)", req.Tool, p.MailID, now.Sub(asked).Round(time.Second)))
		}
		t := time.NewTimer(interval)
		select {
		case <-wctx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return Approval{}, refuse(true, "%s was cancelled while waiting for the person's decision (mail %s): nothing was run or written.", req.Tool, mailIDOf(p))
			}
			msg := fmt.Sprintf("%s: no decision within %s (permission mail %s); no answer counts as a denial, so nothing was run or written. Ask again later or describe the change in your reply.", req.Tool, wait, mailIDOf(p))
			if lastErr != nil {
				msg += " Last error while waiting: " + lastErr.Error()
			}
			return Approval{}, refuse(true, "%s", msg)
		case <-t.C:
		}
		np, err := g.API.GetPermission(wctx, p.MailID)
		switch {
		case err == nil:
			p = np
		case isPermanent(err):
			return Approval{}, g.requestFailure(req.Tool, "read the decision", err)
		default:
			lastErr = err // transient: keep waiting until the bound
		}
	}
}

func mailIDOf(p *client.Permission) string {
	if p == nil {
		return "?"
	}
	return p.MailID
}

// verdict turns a decided permission into an approval or a refusal. Only
// Approved=true on a decision for this very relay key runs anything.
func (g *Gate) verdict(tool, key string, p *client.Permission) (Approval, error) {
	if p.RelayKey != "" && p.RelayKey != key {
		return Approval{}, refuse(true, "%s: the decision on mail %s belongs to another request (relay key %s, expected %s): nothing was run or written.", tool, p.MailID, p.RelayKey, key)
	}
	who := p.DecidedBy
	if who == "" {
		who = "the gateway"
	}
	if p.Approved && p.Status != "pending" {
		g.log().Info("gate: approved", "tool", tool, "mail_id", p.MailID, "decided_by", who)
		return Approval{Via: fmt.Sprintf("approved by %s (%q) on permission mail %s", who, p.Decision, p.MailID)}, nil
	}
	g.log().Info("gate: denied", "tool", tool, "mail_id", p.MailID, "decided_by", who, "decision", p.Decision)
	msg := fmt.Sprintf("%s was denied by %s", tool, who)
	if p.Decision != "" {
		msg += fmt.Sprintf(" (decision %q)", p.Decision)
	}
	if p.Note != "" {
		msg += ": " + p.Note
	}
	return Approval{}, refuse(true, "%s. Nothing was run or written; do not retry the same call, change the approach or ask in your reply.", msg)
}

// isPermanent tells whether a gateway error will not change by retrying: a
// 4xx answer (W-9). Network errors and 5xx are transient.
func isPermanent(err error) bool {
	s := client.StatusOf(err)
	return s >= 400 && s < 500
}

// requestFailure builds the refusal for a failed gateway call: the
// gateway's own error and suggestion for a 4xx, a fail-closed message for a
// transient failure.
func (g *Gate) requestFailure(tool, what string, err error) *Refusal {
	g.log().Warn("gate: gateway call failed; refusing", "tool", tool, "what", what, "err", err)
	if ae := client.AsAPIError(err); ae != nil && ae.Status >= 400 && ae.Status < 500 {
		msg := fmt.Sprintf("%s refused: the gateway answered %d %s when trying to %s: %s", tool, ae.Status, ae.Body.Code, what, ae.Body.Error)
		if ae.Body.Suggestion != "" {
			msg += ". Suggestion: " + ae.Body.Suggestion
		}
		return refuse(false, "%s. Nothing was run or written.", msg)
	}
	var ae *client.APIError
	if errors.As(err, &ae) {
		return refuse(false, "%s refused: the gateway failed (%d) when trying to %s; without a decision nothing runs (fail closed): nothing was run or written. Try again later.", tool, ae.Status, what)
	}
	return refuse(false, "%s refused: the gateway could not be reached to %s (%v); without a decision nothing runs (fail closed): nothing was run or written. Try again later.", tool, what, err)
}
