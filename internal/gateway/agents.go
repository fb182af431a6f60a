package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Agent statuses, from last_seen.
const (
	StatusOnline  = "online"
	StatusOffline = "offline"
)

// AgentView converts a stored agent; Status is online when it was seen
// within Config.OnlineWithin.
func (s *Service) AgentView(a store.AgentRow) client.Agent {
	st := StatusOffline
	if a.LastSeen != nil && s.Now().Sub(*a.LastSeen) <= s.Config.OnlineWithin {
		st = StatusOnline
	}
	out := client.Agent{Name: a.Name, Platform: a.Platform, Status: st, LastSeen: a.LastSeen,
		DefaultRounds: a.DefaultRounds, RegisteredAt: a.RegisteredAt, BridgeVersion: a.BridgeVersion, PlatformVersion: a.PlatformVersion}
	if st == StatusOnline && a.FailingCause != "" {
		out.Failing = &client.AgentFailing{Cause: a.FailingCause, Reason: a.FailingReason, Detail: a.FailingDetail}
	}
	return out
}

// checkVersionText refuses a heartbeat version that people could not read
// as one plain line: longer than client.MaxVersionText characters or with
// a control character (400 on the field).
func checkVersionText(field, v string) error {
	if utf8.RuneCountInString(v) > client.MaxVersionText {
		return Invalid(field, fmt.Sprintf("%s is longer than %d characters", field, client.MaxVersionText), "send the first line of the version only")
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return Invalid(field, field+" holds a control character", "send the version as one line of plain text")
		}
	}
	return nil
}

// MaxHealthReason bounds AgentHealth.Reason as stored, in characters.
const MaxHealthReason = 300

// healthCauses are AgentHealth.Cause's values besides "".
var healthCauses = map[string]bool{client.FailingNotSignedIn: true, client.FailingNoCLI: true,
	client.FailingNoDirectory: true, client.FailingNoModelAllowed: true, client.FailingBusy: true, client.FailingOther: true}

// checkHealth validates a heartbeat's health report and answers it with
// reason and detail each on one line, cut to MaxHealthReason characters
// (both "" when the cause is "").
func checkHealth(h client.AgentHealth) (client.AgentHealth, error) {
	if h.Cause != "" && !healthCauses[h.Cause] {
		return h, Invalid("health.cause", fmt.Sprintf("health.cause %q is not one of not_signed_in, no_cli, no_directory, no_model_allowed, busy, other", h.Cause),
			`send "" while turns work`)
	}
	if h.Cause == "" {
		return client.AgentHealth{}, nil
	}
	return client.AgentHealth{Cause: h.Cause, Reason: oneLineCut(h.Reason, MaxHealthReason), Detail: oneLineCut(h.Detail, MaxHealthReason)}, nil
}

// oneLineCut answers s on one line (runs of white space as one space), cut
// to max characters with a trailing "…".
func oneLineCut(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// Bounds of what an agent registers (trust boundary): every person sees it
// on the Agents page and every model in list_contacts.
const (
	MaxPlatformRunes      = 64
	MaxAgentWorkspaces    = 100
	MaxWorkspaceNameRunes = 200
	MaxWorkspacePathRunes = 4096
)

// checkAgentText is a 400 naming field when v has more than max characters
// or holds a control character (a newline would start a line of its own
// where the value is shown).
func checkAgentText(field, v string, max int) error {
	if n := utf8.RuneCountInString(v); n > max {
		return Invalid(field, fmt.Sprintf("%s has %d characters, at most %d", field, n, max), "shorten it")
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return Invalid(field, field+" holds a control character (a newline, a tab, an escape)", "send it on one line")
	}
	return nil
}

// Register records the agent's platform and workspaces (W-2) and marks it
// seen. Name must be the key's agent (in any case, NormalizeName) or
// empty: an agent cannot register as another name. The W-2 type check of workspaces (an array of objects)
// happens when the body is decoded; here each element needs a path or name.
// The platform (at most MaxPlatformRunes characters), at most
// MaxAgentWorkspaces workspaces, their names (MaxWorkspaceNameRunes) and
// paths (MaxWorkspacePathRunes) are bounded and hold no control character:
// 400 naming the field. An absolute path must be at least two levels deep
// ("/" and "/home" are refused with 400): a registered workspace lets the
// agent list and take reservations in it and below (mayUseWorkspace).
// Instance takes the agent's bridge lease: 409 bridge_instance_conflict
// while another instance holds it (bridgelease.go).
func (s *Service) Register(ctx context.Context, p *Principal, req client.RegisterRequest) (*client.Agent, error) {
	if req.Name != "" && NormalizeName(req.Name) != p.Name {
		return nil, Forbidden("name_mismatch", fmt.Sprintf("this key belongs to agent %q, not %q", p.Name, req.Name),
			fmt.Sprintf("send name %q or leave it empty", p.Name))
	}
	if req.Workspaces == nil {
		req.Workspaces = []client.Workspace{}
	}
	if err := checkAgentText("platform", req.Platform, MaxPlatformRunes); err != nil {
		return nil, err
	}
	if len(req.Workspaces) > MaxAgentWorkspaces {
		return nil, Invalid("workspaces", fmt.Sprintf("%d workspaces, at most %d", len(req.Workspaces), MaxAgentWorkspaces), "register the directories the agent works in")
	}
	for i, w := range req.Workspaces {
		if strings.TrimSpace(w.Path) == "" && strings.TrimSpace(w.Name) == "" {
			return nil, Invalid(fmt.Sprintf("workspaces[%d]", i), "a workspace needs a name or a path",
				"send [] (the path comes from each mail's to_workspace) or objects {name, path}")
		}
		if err := checkAgentText(fmt.Sprintf("workspaces[%d].name", i), w.Name, MaxWorkspaceNameRunes); err != nil {
			return nil, err
		}
		if err := checkAgentText(fmt.Sprintf("workspaces[%d].path", i), w.Path, MaxWorkspacePathRunes); err != nil {
			return nil, err
		}
		if wp := strings.TrimSpace(w.Path); client.WorkspaceTooShallow(wp) {
			return nil, Invalid(fmt.Sprintf("workspaces[%d].path", i),
				fmt.Sprintf("workspace %q is too near the top of the file system: \"/\" and the directories right under it hold everybody's work", wp),
				"register the directory the agent works in, at least two levels deep (e.g. /home/me/project)")
		}
	}
	if err := validInstance(req.Instance); err != nil {
		return nil, err
	}
	ws, _ := json.Marshal(req.Workspaces)
	var a store.AgentRow
	err := s.Write(ctx, func(tx *Tx) error {
		if err := s.takeLease(ctx, tx, p.Name, req.Instance, req.Replaces, true); err != nil { // bridgelease.go
			return err
		}
		if err := tx.RegisterAgent(ctx, p.Name, strings.TrimSpace(req.Platform), string(ws), tx.Now); err != nil {
			return err
		}
		var err error
		a, err = tx.GetAgent(ctx, p.Name)
		return err
	})
	if err != nil {
		return nil, err
	}
	v := s.AgentView(a)
	return &v, nil
}

// Heartbeat marks the agent seen and stores what it reports (W-3): a nil
// platform_sessions or models (field omitted) keeps what the server has, an
// empty list clears it (N-7); health, when given, replaces the agent's
// failing state (issue 18 point 1; a cause outside client.Failing* is a 400
// on health.cause). The answer carries the unread count, the
// stats and the allowed models (models_unrestricted when no list is set).
// Instance renews the agent's bridge lease: 409 bridge_instance_conflict
// when another instance holds it (bridgelease.go).
func (s *Service) Heartbeat(ctx context.Context, p *Principal, req client.HeartbeatRequest) (*client.HeartbeatResponse, error) {
	if req.PlatformSessions != nil {
		for i, ps := range *req.PlatformSessions {
			if strings.TrimSpace(ps.PlatformID) == "" {
				return nil, Invalid(fmt.Sprintf("platform_sessions[%d].platform_id", i), "platform_id is required", "")
			}
			for _, f := range []struct {
				name, v string
				max     int
			}{{"platform_id", ps.PlatformID, MaxPlatformIDRunes}, {"workspace", ps.Workspace, client.MaxPlatformWorkspaceRunes},
				{"slug", ps.Slug, MaxSlugRunes}, {"title", ps.Title, client.MaxPlatformTitleRunes}} {
				if err := tooLong(fmt.Sprintf("platform_sessions[%d].%s", i, f.name), f.v, f.max); err != nil { // textbounds.go
					return nil, err
				}
			}
		}
	}
	if req.Models != nil {
		if n := len(*req.Models); n > MaxHeartbeatModels {
			return nil, Invalid("models", fmt.Sprintf("%d models, at most %d", n, MaxHeartbeatModels), "send the models the agent may really use")
		}
		for i, m := range *req.Models {
			if strings.TrimSpace(m.Model) == "" {
				return nil, Invalid(fmt.Sprintf("models[%d].model", i), "model is required", "")
			}
			for _, f := range [][2]string{{"provider", m.Provider}, {"model", m.Model}, {"display_name", m.DisplayName}} {
				if err := tooLong(fmt.Sprintf("models[%d].%s", i, f[0]), f[1], MaxModelRunes); err != nil { // textbounds.go
					return nil, err
				}
			}
		}
	}
	var health client.AgentHealth
	if req.Health != nil {
		var err error
		if health, err = checkHealth(*req.Health); err != nil {
			return nil, err
		}
	}
	for field, v := range map[string]string{"bridge_version": req.BridgeVersion, "platform_version": req.PlatformVersion} {
		if err := checkVersionText(field, v); err != nil {
			return nil, err
		}
	}
	if err := validInstance(req.Instance); err != nil {
		return nil, err
	}
	if req.Release {
		return s.releaseLease(ctx, p.Name, req.Instance) // bridgelease.go
	}
	resp := &client.HeartbeatResponse{Status: "ok", AllowedModels: []client.ModelRef{}}
	err := s.Write(ctx, func(tx *Tx) error {
		if err := s.takeLease(ctx, tx, p.Name, req.Instance, "", false); err != nil { // bridgelease.go
			return err
		}
		if err := tx.TouchAgent(ctx, p.Name, tx.Now); err != nil {
			return err
		}
		if req.BridgeVersion != "" || req.PlatformVersion != "" {
			if err := tx.SetAgentVersions(ctx, p.Name, req.BridgeVersion, req.PlatformVersion); err != nil {
				return err
			}
		}
		if req.Health != nil {
			if err := tx.SetAgentHealth(ctx, p.Name, health.Cause, health.Reason, health.Detail); err != nil {
				return err
			}
		}
		if req.PlatformSessions != nil {
			rows := make([]store.PlatformSessionRow, 0, len(*req.PlatformSessions))
			// S-1/S-3 kept by the server too: no slug, duplicate slugs (discovery.go).
			for _, ps := range NormalizePlatformSessions(*req.PlatformSessions) {
				rows = append(rows, store.PlatformSessionRow{AgentName: p.Name, PlatformID: ps.PlatformID, Workspace: ps.Workspace,
					Slug: ps.Slug, Title: ps.Title, MailDriven: ps.MailDriven, UpdatedAt: ps.UpdatedAt})
			}
			if err := tx.ReplacePlatformSessions(ctx, p.Name, rows); err != nil {
				return err
			}
		}
		if req.Models != nil {
			rows := make([]store.ModelRow, 0, len(*req.Models))
			for _, m := range *req.Models {
				rows = append(rows, store.ModelRow{Provider: m.Provider, Model: m.Model, DisplayName: m.DisplayName})
			}
			if err := tx.ReplaceModelCatalog(ctx, p.Name, rows); err != nil {
				return err
			}
		}
		a, err := tx.GetAgent(ctx, p.Name)
		if err != nil {
			return err
		}
		resp.Stats = client.AgentStats{AgentName: a.Name, DefaultRounds: a.DefaultRounds, SentTotal: a.SentTotal}
		if resp.PendingMails, err = tx.Unread(ctx, p.Name); err != nil {
			return err
		}
		ps, err := tx.PlatformSessions(ctx, p.Name)
		if err != nil {
			return err
		}
		resp.PlatformSessionsSynced = len(ps)
		ms, err := tx.ModelCatalog(ctx, p.Name)
		if err != nil {
			return err
		}
		resp.ModelsSynced = len(ms)
		allowed, err := s.allowedModels(ctx, tx.Q, p.Name)
		if err != nil {
			return err
		}
		resp.AllowedModels, resp.ModelsUnrestricted = allowed.AllowedModels, allowed.ModelsUnrestricted
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// AllowedModels answers the agent's model scope (W-3): the list in priority
// order, or models_unrestricted true when none is set.
func (s *Service) AllowedModels(ctx context.Context, agent string) (*client.AllowedModels, error) {
	return s.allowedModels(ctx, s.Read(), agent)
}

func (s *Service) allowedModels(ctx context.Context, q *store.Q, agent string) (*client.AllowedModels, error) {
	list, restricted, err := q.AllowedModels(ctx, agent)
	if errors.Is(err, store.ErrNotFound) {
		return nil, agentNotFound(agent)
	}
	if err != nil {
		return nil, err
	}
	out := &client.AllowedModels{AllowedModels: []client.ModelRef{}, ModelsUnrestricted: !restricted}
	for _, m := range list {
		out.AllowedModels = append(out.AllowedModels, client.ModelRef{Provider: m.Provider, Model: m.Model})
	}
	return out, nil
}

func agentNotFound(name string) error {
	return NotFound("agent_not_found", fmt.Sprintf("no agent named %q", name), "list agents with GET /api/v1/agents")
}

// ListAgents answers every agent with its online status.
func (s *Service) ListAgents(ctx context.Context) (*client.AgentList, error) {
	rows, err := s.Read().ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	out := &client.AgentList{Agents: []client.Agent{}}
	for _, a := range rows {
		out.Agents = append(out.Agents, s.AgentView(a))
	}
	return out, nil
}

// AgentDetail answers one agent with its catalogue, allowed models, mail
// sessions (most recent first, at most 100) and platform session mirror.
// viewer nil (the admin endpoint) lists every session and mirrored platform
// session; otherwise only the sessions the viewer may see and the mirrored
// platform sessions visibleMirror lets the viewer see (issue 12: a mirror
// reveals a session's title and workspace).
func (s *Service) AgentDetail(ctx context.Context, name string, viewer *Principal) (*client.AgentDetail, error) {
	name = NormalizeName(name) // names are case-insensitive
	q := s.Read()
	a, err := q.GetAgent(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, agentNotFound(name)
	}
	if err != nil {
		return nil, err
	}
	out := &client.AgentDetail{Agent: s.AgentView(a), Models: []client.Model{}, Sessions: []client.Session{},
		PlatformSessions: []client.PlatformSession{}}
	ms, err := q.ModelCatalog(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		out.Models = append(out.Models, client.Model{Provider: m.Provider, Model: m.Model, DisplayName: m.DisplayName})
	}
	allowed, err := s.allowedModels(ctx, q, name)
	if err != nil {
		return nil, err
	}
	out.AllowedModels, out.ModelsUnrestricted = allowed.AllowedModels, allowed.ModelsUnrestricted
	sessions, err := q.SessionsOf(ctx, name, 100, 0, "")
	if err != nil {
		return nil, err
	}
	viewerName := ""
	var visible map[string]bool
	if viewer != nil {
		viewerName = viewer.Name
		ids := make([]string, 0, len(sessions))
		for _, row := range sessions {
			ids = append(ids, row.SessionID)
		}
		if visible, err = visibleSessions(ctx, q, viewerName, ids); err != nil {
			return nil, err
		}
	}
	for _, row := range sessions {
		if viewer != nil && !visible[row.SessionID] {
			continue
		}
		v, err := s.sessionView(ctx, q, row, viewerName)
		if err != nil {
			return nil, err
		}
		out.Sessions = append(out.Sessions, *v)
	}
	ps, err := q.PlatformSessions(ctx, name)
	if err != nil {
		return nil, err
	}
	if viewer != nil {
		if ps, err = visibleMirror(ctx, q, viewer, ps); err != nil {
			return nil, err
		}
	}
	for _, p := range ps {
		out.PlatformSessions = append(out.PlatformSessions, client.PlatformSession{PlatformID: p.PlatformID, Workspace: p.Workspace,
			Slug: p.Slug, Title: p.Title, MailDriven: p.MailDriven, UpdatedAt: p.UpdatedAt})
	}
	return out, nil
}

// UpdateAgent changes an agent's default round budget (admin).
func (s *Service) UpdateAgent(ctx context.Context, name string, req client.UpdateAgentRequest) (*client.Agent, error) {
	name = NormalizeName(name) // names are case-insensitive
	if req.DefaultRounds != nil && *req.DefaultRounds < 0 {
		return nil, Invalid("default_rounds", "default_rounds must be 0 (unlimited) or more", "")
	}
	var a store.AgentRow
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		if a, err = tx.GetAgent(ctx, name); errors.Is(err, store.ErrNotFound) {
			return agentNotFound(name)
		} else if err != nil {
			return err
		}
		if req.DefaultRounds != nil {
			if err := tx.SetAgentDefaultRounds(ctx, name, *req.DefaultRounds); err != nil {
				return err
			}
			a.DefaultRounds = *req.DefaultRounds
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	v := s.AgentView(a)
	return &v, nil
}
