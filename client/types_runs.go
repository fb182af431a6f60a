package client

import (
	"strings"
	"time"
)

// Run states (seed 004 section 1, with queued): one vocabulary everywhere.
// running: the platform process is alive and the turn has not ended; idle:
// the process is alive and the turn ended (platforms whose process outlives
// a turn); queued: the mail waits for a turn slot; finished: settled with a
// result or a stop; failed: an error, a non-zero exit or no result.
const (
	RunRunning  = "running"
	RunIdle     = "idle"
	RunQueued   = "queued"
	RunFinished = "finished"
	RunFailed   = "failed"
)

// StopReasonStopped is a run's stop_reason when a person stopped it.
const StopReasonStopped = "stopped"

// Quiescence values of a stopped run (seed 004 section 1): proven when every
// process started for the turn is gone, checked by pid; unproven otherwise.
const (
	QuiescenceProven   = "proven"
	QuiescenceUnproven = "unproven"
)

// Bounds of a run's progress fields.
const (
	MaxRunToolNameRunes  = 200
	MaxRunToolInputRunes = 200
	// MaxRunErrorRunes bounds Run.Error; Run.Model is bounded by
	// MaxModelRunes.
	MaxRunErrorRunes = 2000
)

// Run is one turn of an agent platform for one mail, reported by the bridge
// with PUT /api/v1/runs/{run_id} (an upsert) and listed with
// GET /api/v1/me/sessions/{id}/runs. Every field is backed by a process fact.
type Run struct {
	RunID         string     `json:"run_id" in:"optional"`
	SessionID     string     `json:"session_id"`
	MailID        string     `json:"mail_id" in:"optional"`
	AgentName     string     `json:"agent_name" in:"optional"`
	State         string     `json:"state" enum:"running,idle,queued,finished,failed"`
	Model         string     `json:"model,omitempty" bounds:"maxLength=200"`
	Attempt       int        `json:"attempt"`
	PID           int        `json:"pid,omitempty"`
	ExitCode      *int       `json:"exit_code,omitempty"`
	StartedAt     time.Time  `json:"started_at" in:"optional"`
	EndedAt       *time.Time `json:"ended_at,omitempty"`
	DurationMS    int64      `json:"duration_ms"`
	BytesRead     int64      `json:"bytes_read"`
	UnparsedLines int        `json:"unparsed_lines"`
	StopReason    string     `json:"stop_reason,omitempty"`
	Error         string     `json:"error,omitempty" bounds:"maxLength=2000"`
	UpdatedAt     time.Time  `json:"updated_at" in:"optional"`
	// QueuePosition is how many turns are ahead of a queued run, MaxTurns
	// how many the bridge runs at once (seed 004 A6); both 0 otherwise.
	QueuePosition int `json:"queue_position,omitempty"`
	MaxTurns      int `json:"max_turns,omitempty"`
	// ToolCalls counts the tool calls so far; LastTool is the last one's
	// name and LastToolInput a one-line summary of its input (at most 200
	// characters); LastActivityAt is the last output seen from the platform.
	ToolCalls      int        `json:"tool_calls"`
	LastTool       string     `json:"last_tool,omitempty"`
	LastToolInput  string     `json:"last_tool_input,omitempty"`
	LastActivityAt *time.Time `json:"last_activity_at,omitempty"`
	// StopRequestedAt is set when a person asked to stop the run
	// (POST /api/v1/me/runs/{run_id}/stop or a stop mail); StoppedBy names
	// them. A stopped run ends finished with StopReason "stopped" and
	// Quiescence "proven" or "unproven".
	StopRequestedAt *time.Time `json:"stop_requested_at,omitempty"`
	StoppedBy       string     `json:"stopped_by,omitempty"`
	Quiescence      string     `json:"quiescence,omitempty" enum:"proven,unproven"`
	// TranscriptAttachmentID is the run's transcript (Markdown), an
	// attachment the agent uploaded; "" when there is none.
	TranscriptAttachmentID string `json:"transcript_attachment_id,omitempty"`
}

// RunStopEvent is the data of a run_stop event to the run's agent: a person
// asked to stop the run (issue 16).
type RunStopEvent struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	MailID    string `json:"mail_id"`
	StoppedBy string `json:"stopped_by"`
}

// RunStopResponse answers POST /api/v1/me/runs/{run_id}/stop (202): the
// stop was sent to the agent's bridge; the run card shows when it ends.
type RunStopResponse struct {
	Status string `json:"status"` // "stopping"
	Run    Run    `json:"run"`
}

// RunList answers GET /api/v1/me/sessions/{id}/runs and
// GET /api/v1/sessions/{id}/runs.
type RunList struct {
	Runs []Run `json:"runs"`
}

// IsStopWord reports whether a mail body is the stop word of issue 16: its
// whole text, trimmed, in any case, is "stop" or "停止". A person's mail
// that is one stops the recipient agent's running turn of the session and
// starts no turn (docs/CONTRACT.md, run supervision).
func IsStopWord(body string) bool {
	t := strings.TrimSpace(body)
	return strings.EqualFold(t, "stop") || t == "停止"
}
