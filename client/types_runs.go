package client

import "time"

// Run states (seed 004): one vocabulary everywhere.
const (
	RunRunning  = "running"
	RunIdle     = "idle"
	RunFinished = "finished"
	RunFailed   = "failed"
)

// Run is one turn of an agent platform for one mail, reported by the bridge
// with PUT /api/v1/runs/{run_id} (an upsert) and listed with
// GET /api/v1/me/sessions/{id}/runs. Every field is backed by a process fact.
type Run struct {
	RunID         string     `json:"run_id" in:"optional"`
	SessionID     string     `json:"session_id"`
	MailID        string     `json:"mail_id" in:"optional"`
	AgentName     string     `json:"agent_name" in:"optional"`
	State         string     `json:"state" enum:"running,idle,finished,failed"`
	Model         string     `json:"model,omitempty"`
	Attempt       int        `json:"attempt"`
	PID           int        `json:"pid,omitempty"`
	ExitCode      *int       `json:"exit_code,omitempty"`
	StartedAt     time.Time  `json:"started_at" in:"optional"`
	EndedAt       *time.Time `json:"ended_at,omitempty"`
	DurationMS    int64      `json:"duration_ms"`
	BytesRead     int64      `json:"bytes_read"`
	UnparsedLines int        `json:"unparsed_lines"`
	StopReason    string     `json:"stop_reason,omitempty"`
	Error         string     `json:"error,omitempty"`
	UpdatedAt     time.Time  `json:"updated_at" in:"optional"`
}

// RunList answers GET /api/v1/me/sessions/{id}/runs and
// GET /api/v1/sessions/{id}/runs.
type RunList struct {
	Runs []Run `json:"runs"`
}
