package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/blob"
	"github.com/agentmail/agentmail/internal/gateway"
)

// Environment of the issue-3 extras, read when the gateway starts.
const (
	// EnvMaxAttachmentBytes is the size limit of one attachment in bytes
	// (W-8); default gateway.DefaultMaxAttachmentBytes (25 MB).
	EnvMaxAttachmentBytes = "AGENTMAIL_MAX_ATTACHMENT_BYTES"
	// EnvAttachmentDir is where attachment contents live; default
	// <data dir>/attachments.
	EnvAttachmentDir = "AGENTMAIL_ATTACHMENT_DIR"
	// EnvSweepInterval is how often permission timeouts and due reminders
	// are handled (a Go duration, e.g. "5s"); default 5 s.
	EnvSweepInterval = "AGENTMAIL_SWEEP_INTERVAL"
	// EnvAttachmentSweepInterval is how often unsent attachments and
	// unreferenced contents are removed; default 10 min.
	EnvAttachmentSweepInterval = "AGENTMAIL_ATTACHMENT_SWEEP_INTERVAL"
	// EnvScheduleLimit is the per-owner schedule cap; default 50.
	EnvScheduleLimit = "AGENTMAIL_SCHEDULE_LIMIT"
)

// extras is the state of the permission, attachment and schedule handlers
// and their background sweeps.
type extras struct {
	blobs                *blob.Store
	maxAttachmentBytes   int64
	sweepEvery           time.Duration
	attachmentSweepEvery time.Duration
	scheduleLimit        int // 0: gateway.DefaultScheduleLimit
}

// ext answers the server's extras; a Server built without Start has no
// attachment store (its attachment routes answer 503).
func (s *Server) ext() *extras {
	if s.extras == nil {
		return &extras{maxAttachmentBytes: gateway.DefaultMaxAttachmentBytes}
	}
	return s.extras
}

// extrasFromEnv reads the extras' environment; dataDir is the gateway's
// data directory.
func extrasFromEnv(dataDir string) (*extras, error) {
	x := &extras{maxAttachmentBytes: gateway.DefaultMaxAttachmentBytes, sweepEvery: 5 * time.Second,
		attachmentSweepEvery: 10 * time.Minute}
	if v := strings.TrimSpace(os.Getenv(EnvMaxAttachmentBytes)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive number of bytes", EnvMaxAttachmentBytes, v)
		}
		x.maxAttachmentBytes = n
	}
	for _, d := range []struct {
		env string
		dst *time.Duration
	}{{EnvSweepInterval, &x.sweepEvery}, {EnvAttachmentSweepInterval, &x.attachmentSweepEvery}} {
		if v := strings.TrimSpace(os.Getenv(d.env)); v != "" {
			n, err := time.ParseDuration(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("%s=%q: want a positive duration such as 5s", d.env, v)
			}
			*d.dst = n
		}
	}
	if v := strings.TrimSpace(os.Getenv(EnvScheduleLimit)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive number", EnvScheduleLimit, v)
		}
		x.scheduleLimit = n
	}
	dir := strings.TrimSpace(os.Getenv(EnvAttachmentDir))
	if dir == "" {
		if dataDir == "" {
			dataDir = "./data"
		}
		dir = filepath.Join(dataDir, "attachments")
	}
	b, err := blob.Open(dir)
	if err != nil {
		return nil, err
	}
	x.blobs = b
	return x, nil
}

// startExtras keeps x (its attachment store open) and starts the sweeps of
// issue 3 (permission timeouts, reminders, unsent attachments) until ctx
// ends. The
// first round runs at once, so what fell due while the gateway was down is
// handled at start.
func (s *Server) startExtras(ctx context.Context, x *extras) {
	s.extras = x
	go s.runSweeps(ctx)
}

// runSweeps runs the background sweeps until ctx ends. Errors are logged;
// the next round retries.
func (s *Server) runSweeps(ctx context.Context) {
	x := s.extras
	fast := time.NewTicker(x.sweepEvery)
	defer fast.Stop()
	slow := time.NewTicker(x.attachmentSweepEvery)
	defer slow.Stop()
	s.sweepOnce(ctx)
	s.sweepAttachments(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-fast.C:
			s.sweepOnce(ctx)
		case <-slow.C:
			s.sweepAttachments(ctx)
		}
	}
}

func (s *Server) sweepOnce(ctx context.Context) {
	if n, err := s.svc.ExpirePermissions(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("permission timeout sweep failed", "err", err)
	} else if n > 0 {
		s.log.Info("permission requests denied by timeout", "count", n)
	}
	if _, err := s.svc.SendDueReminders(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("reminder sweep failed", "err", err)
	}
}

func (s *Server) sweepAttachments(ctx context.Context) {
	x := s.extras
	if n, err := s.svc.SweepAttachments(ctx, x.blobs); err != nil && ctx.Err() == nil {
		s.log.Error("attachment sweep failed", "err", err)
	} else if n > 0 {
		s.log.Info("unsent attachments removed", "count", n)
	}
	if _, err := x.blobs.CleanTemp(time.Now().Add(-time.Hour)); err != nil && ctx.Err() == nil {
		s.log.Error("attachment temp cleanup failed", "err", err)
	}
}

// ------------------------------------------------------------ model scope

// modelScopeRoutes are the admin's view and setting of an agent's model
// scope (W-3).
func modelScopeRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: p + "/admin/agents/{name}/models", Auth: AuthAdmin, Summary: "An agent's model catalogue and allowed list",
			Response: client.AgentDetail{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleAdminAgentModels)},
		{Method: "PUT", Path: p + "/admin/agents/{name}/models", Auth: AuthAdmin, Summary: "Set an agent's allowed models in priority order, or make it unrestricted",
			Request: client.AllowedModels{}, Response: client.AllowedModels{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleSetAgentModels)},
	}
}

func (s *Server) handleAdminAgentModels(w http.ResponseWriter, r *http.Request) (*client.AgentDetail, error) {
	return s.svc.AgentDetail(r.Context(), chi.URLParam(r, "name"), nil)
}

// handleSetAgentModels reads the body twice: as client.AllowedModels, and
// to tell an absent or null allowed_models from [] (an absent list without
// models_unrestricted would silently allow nothing, so it is a 400).
func (s *Server) handleSetAgentModels(w http.ResponseWriter, r *http.Request) (*client.AllowedModels, error) {
	var raw json.RawMessage
	if err := decodeJSON(w, r, &raw); err != nil {
		return nil, err
	}
	var req client.AllowedModels
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(raw))
	if err := decodeJSON(w, r2, &req); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields)
	if list, ok := fields["allowed_models"]; !req.ModelsUnrestricted && (!ok || string(list) == "null") {
		return nil, gateway.Invalid("allowed_models", "allowed_models is missing",
			`send the list in priority order ([] allows nothing), or {"models_unrestricted": true} to remove the scope`)
	}
	return s.svc.SetAllowedModels(r.Context(), chi.URLParam(r, "name"), req)
}
