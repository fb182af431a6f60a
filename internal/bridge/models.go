package bridge

import (
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// ModelScope is the admin's model scope as the last good heartbeat returned
// it (B-2.2). Known is false until a heartbeat succeeded.
type ModelScope struct {
	Known        bool
	Allowed      []client.ModelRef // priority order
	Unrestricted bool
}

// AttemptOrder is D-3's modelAttemptOrder: the models to try for one mail,
// in order; a nil entry lets the platform choose its default.
//   - without C-13 (perTurnModel false): [nil], no fallback (D-3 first line);
//   - scope unknown or unrestricted: [nil] (W-3: unrestricted means the
//     platform default, not "nothing");
//   - restricted: the allowed models in priority order; an empty allowed
//     list is an empty order (nothing is allowed), which the core reports
//     as a failure (B-6) instead of running any model.
func AttemptOrder(scope ModelScope, perTurnModel bool) []*client.ModelRef {
	if !perTurnModel || !scope.Known || scope.Unrestricted {
		return []*client.ModelRef{nil}
	}
	out := make([]*client.ModelRef, 0, len(scope.Allowed))
	for i := range scope.Allowed {
		m := scope.Allowed[i]
		out = append(out, &m)
	}
	return out
}

// ModelLabel names a model in logs, run cards and failure reports:
// "provider/model", or "platform default" for nil.
func ModelLabel(m *client.ModelRef) string {
	if m == nil {
		return "platform default"
	}
	if m.Provider == "" {
		return m.Model
	}
	return m.Provider + "/" + m.Model
}

// AttemptFailure is one route that did not work, for the failure report.
type AttemptFailure struct {
	Model  string // ModelLabel of the route
	Reason string // the platform's words
}

// FailureStage says where handling a mail stopped (the three cases of B-6).
type FailureStage string

// The B-6 cases.
const (
	StageWorkspace FailureStage = "workspace" // no usable working directory
	StageSession   FailureStage = "session"   // the platform session could not be created
	StageModel     FailureStage = "model"     // every model in scope failed, or none is allowed
)

// failurePrefix is the subject prefix of failure reports (B-6.1). The form
// is the seed's own, "处理失败: <subject>"; the body starts in English.
const failurePrefix = "处理失败"

// FailureSubject is B-6.1's subject: "处理失败: <original subject>".
func FailureSubject(subject string) string {
	return failurePrefix + ": " + StripReplyPrefixes(subject)
}

// FailureRelayKey is B-6.3's relay key: "model-failure:<mail_id>", so one
// mail produces at most one failure report even across restarts.
func FailureRelayKey(mailID string) string { return "model-failure:" + mailID }

// FailureReport is the input of FailureBody.
type FailureReport struct {
	AgentName   string
	MailID      string
	Stage       FailureStage
	Detail      string           // the stage's own error, e.g. the workspace rule that failed
	Attempts    []AttemptFailure // every route tried, in order (B-6.2)
	Workspace   WorkspaceChoice  // expected and fallback directories (B-6 third case)
	NoneAllowed bool             // the scope allows no model at all
}

// FailureBody is B-6.2's body: what failed, every route tried and why, and
// where to adjust. It is Markdown.
func FailureBody(r FailureReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your mail could not be handled by agent %s (mail %s). / 这封邮件未能处理。\n\n", r.AgentName, r.MailID)
	switch r.Stage {
	case StageWorkspace:
		b.WriteString("**Stage:** choosing the working directory.\n\n")
		fmt.Fprintf(&b, "- expected directory: `%s`\n", orNone(r.Workspace.Expected))
		if r.Workspace.Reason != "" {
			fmt.Fprintf(&b, "- why it is unusable: %s\n", r.Workspace.Reason)
		}
		if r.Detail != "" {
			fmt.Fprintf(&b, "- %s\n", r.Detail)
		}
		b.WriteString("\n**Where to adjust:** write to an address whose path is an existing absolute directory on the agent's machine, " +
			"or set AGENTMAIL_FALLBACK_DIR on the bridge to an existing directory. Directories are never created.\n")
	case StageSession, StageModel:
		if r.Stage == StageSession {
			b.WriteString("**Stage:** creating or running the platform session.\n\n")
		} else {
			b.WriteString("**Stage:** running the model.\n\n")
		}
		if r.NoneAllowed {
			b.WriteString("The admin's model scope for this agent allows no model at all.\n")
		}
		if len(r.Attempts) > 0 {
			b.WriteString("Routes tried, in order:\n\n")
			for i, a := range r.Attempts {
				fmt.Fprintf(&b, "%d. `%s`: %s\n", i+1, a.Model, oneLine(a.Reason))
			}
		}
		if r.Detail != "" {
			fmt.Fprintf(&b, "\n%s\n", r.Detail)
		}
		fmt.Fprintf(&b, "\n**Where to adjust:** the agent's model scope (web page: Agents → %s → models, "+
			"or PUT /api/v1/admin/agents/%s/models), the platform's own model and provider configuration on the agent's machine, "+
			"and the bridge log there.\n", r.AgentName, r.AgentName)
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// oneLine folds a multi-line platform error into one line for a list item.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(no reason given by the platform)"
	}
	return s
}
