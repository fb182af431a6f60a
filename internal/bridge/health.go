package bridge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agentmail/agentmail/client"
)

// The bridge's health (issue 18 point 1): a cheap check of the platform at
// start, and the outcome of its recent turns, reported in every heartbeat
// so that the Agents page shows an agent whose turns all fail as "online,
// failing: <reason>" instead of plain online.

// HealthWindow is how many recent turns the health report looks at: the
// agent is failing while each of them failed (and at least one ran, or the
// start-up check found a cause).
const HealthWindow = 3

// versionTimeout bounds the start-up `<platform> --version` call.
const versionTimeout = 20 * time.Second

// SignInChecker is implemented by adapters whose platform can tell, without
// a model call, that it has neither a login nor an API key.
type SignInChecker interface {
	// SignInProblem answers "" when a login or a key is present or it
	// cannot be told, else the reason in English naming the fix. It is
	// called once, after Start; it must not call a model.
	SignInProblem(ctx context.Context) string
}

// turnOutcome is one turn's result as the health report sees it.
type turnOutcome struct {
	failed bool
	health client.AgentHealth
}

// healthState holds the last HealthWindow outcomes, newest last.
type healthState struct {
	mu     sync.Mutex
	recent []turnOutcome
}

func (h *healthState) note(o turnOutcome) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recent = append(h.recent, o)
	if len(h.recent) > HealthWindow {
		h.recent = h.recent[len(h.recent)-HealthWindow:]
	}
}

// report answers the heartbeat's health: the newest failure's cause while
// every recent outcome failed, else cause "".
func (h *healthState) report() client.AgentHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.recent) == 0 {
		return client.AgentHealth{}
	}
	for _, o := range h.recent {
		if !o.failed {
			return client.AgentHealth{}
		}
	}
	return h.recent[len(h.recent)-1].health
}

// noteTurnWorked records a turn that ran and answered.
func (b *Bridge) noteTurnWorked() { b.health.note(turnOutcome{}) }

// noteTurnFailed records a failure report's cause.
func (b *Bridge) noteTurnFailed(r FailureReport) {
	b.health.note(turnOutcome{failed: true, health: healthOf(r)})
}

// healthOf answers a failure report's cause as the heartbeat reports it:
// the cause, an English line naming its fix, and the platform's own words.
func healthOf(r FailureReport) client.AgentHealth {
	detail := r.Detail
	for _, a := range r.Attempts {
		if strings.TrimSpace(a.Reason) != "" {
			detail = a.Reason // the first route's reason, in the platform's words
			break
		}
	}
	h := client.AgentHealth{Detail: detail}
	switch failureCauseOf(r) {
	case causeNotSignedIn:
		h.Cause, h.Reason = client.FailingNotSignedIn, "the platform is not signed in: sign it in on the agent's machine or set its API key (for Claude Code: ANTHROPIC_API_KEY)"
	case causeNoCLI:
		h.Cause, h.Reason = client.FailingNoCLI, "the platform's program is missing or does not run: install it on the agent's machine"
	case causeNoDirectory:
		h.Cause, h.Reason = client.FailingNoDirectory, "the mails' working directory is not usable on the agent's machine: write to a directory that exists there"
		h.Detail = r.Workspace.Expected
	case causeNoModelAllowed:
		h.Cause, h.Reason = client.FailingNoModelAllowed, "no model is allowed for this agent: an admin allows one on the agent's page"
	case causeBusy:
		h.Cause, h.Reason = client.FailingBusy, "the model's provider is busy or limits use: try again later"
	default:
		h.Cause, h.Reason = client.FailingOther, "the platform reports: "+oneLine(detail)
	}
	return h
}

// checkPlatform is the start-up check: the platform's program runs and
// answers its version (logged), and, where the adapter can tell without a
// model call, it is signed in. A problem is logged as a warning with its
// fix and counts as the first failed outcome until a turn works.
func (b *Bridge) checkPlatform(ctx context.Context, env Env) {
	name := b.adapter.Name()
	if env.Bin != "" {
		version, err := platformVersion(ctx, env)
		if err != nil {
			b.log.Warn(fmt.Sprintf("%s does not run: %v; reinstall it on this machine (or set AGENTMAIL_%s_BIN), then restart the bridge", env.Bin, err, strings.ToUpper(name)))
			b.health.note(turnOutcome{failed: true, health: client.AgentHealth{Cause: client.FailingNoCLI,
				Reason: "the platform's program does not run: reinstall it on the agent's machine", Detail: err.Error()}})
			return
		}
		b.log.Info(fmt.Sprintf("platform %s %s", name, version), "bin", env.Bin)
		b.mu.Lock()
		b.platformVersion = versionText(version)
		b.mu.Unlock()
	}
	if c, ok := b.adapter.(SignInChecker); ok {
		if problem := c.SignInProblem(ctx); problem != "" {
			b.log.Warn(problem)
			b.health.note(turnOutcome{failed: true, health: client.AgentHealth{Cause: client.FailingNotSignedIn,
				Reason: "the platform is not signed in: sign it in on the agent's machine or set its API key (for Claude Code: ANTHROPIC_API_KEY)",
				Detail: problem}})
		}
	}
}

// platformVersion runs `<bin> --version` the way turns run the platform
// (confined, without the bridge's credentials) and answers its first line.
// Errors: the program cannot start, exits with an error, or takes longer
// than versionTimeout.
func platformVersion(ctx context.Context, env Env) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := env.Command(env.Bin, "--version")
	cmd.Env = PlatformEnviron(os.Environ())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			if msg := firstLine(errb.String()); msg != "" {
				return "", fmt.Errorf("`%s --version`: %v: %s", env.Bin, err, msg)
			}
			return "", fmt.Errorf("`%s --version`: %v", env.Bin, err)
		}
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return "", fmt.Errorf("`%s --version` did not answer within %s", env.Bin, versionTimeout)
	}
	v := firstLine(out.String())
	if v == "" {
		v = firstLine(errb.String())
	}
	return v, nil
}

// versionText makes a version answer fit the heartbeat: control characters
// dropped, at most client.MaxVersionText characters.
func versionText(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, firstLine(s))
	if r := []rune(s); len(r) > client.MaxVersionText {
		s = string(r[:client.MaxVersionText])
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
