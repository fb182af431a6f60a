package mcptools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmail/agentmail/client"
)

func (s *Server) suggestAddress(ctx context.Context, a args) (string, error) {
	q, err := a.required("query", "part of a name, directory or alias")
	if err != nil {
		return "", err
	}
	limit, err := a.bounded("limit", suggestLimitDefault, 1, suggestLimitMax)
	if err != nil {
		return "", err
	}
	l, err := s.gateway().Suggest(ctx, q, limit)
	if err != nil {
		return "", err
	}
	return RenderSuggestions(q, l), nil
}

func (s *Server) listContacts(ctx context.Context, _ args) (string, error) {
	l, err := s.gateway().Contacts(ctx)
	if err != nil {
		return "", err
	}
	return RenderContacts(l), nil
}

func (s *Server) sessionParticipants(ctx context.Context, a args) (string, error) {
	id, err := a.str("session_id")
	if err != nil {
		return "", err
	}
	id = strings.TrimSpace(id)
	if id == "" {
		id = s.cfg.SessionID
	}
	if id == "" {
		return "", badArg("session_id is required: this tool server has no current session (AGENTMAIL_SESSION_ID is empty)")
	}
	l, err := s.gateway().Participants(ctx, id)
	if err != nil {
		return "", err
	}
	return RenderParticipants(l), nil
}

// connectToServer registers the agent (T-6) and, on success, switches this
// tool server to that gateway and key. A key that is neither given nor
// configured is generated and saved with mode 0600 to the key file (never
// overwriting one); only its file path and first characters are shown.
func (s *Server) connectToServer(ctx context.Context, a args) (string, error) {
	v, err := a.strs("gateway_url", "agent_name", "agent_key", "platform", "workspace")
	if err != nil {
		return "", err
	}
	url, name, key, platform, ws := v[0], v[1], v[2], v[3], v[4]
	url, name, key, platform, ws = strings.TrimSpace(url), strings.TrimSpace(name), strings.TrimSpace(key), strings.TrimSpace(platform), strings.TrimSpace(ws)
	if (s.cfg.TurnToken != "" || s.cfg.TurnTokenFile != "") && key == "" {
		// Under a bridge the tools hold only this turn's token; the agent
		// key, its file and the registration stay with the bridge.
		return "", errors.New("this tool server works for the current turn only (AGENTMAIL_TURN_TOKEN): the bridge is already connected and keeps the agent key; use the other tools, which act in this turn's session")
	}
	if url == "" {
		url = s.cfg.GatewayURL
	}
	if name == "" {
		name = s.cfg.AgentName
	}
	if platform == "" {
		platform = s.cfg.Platform
	}
	if ws == "" {
		ws = s.cfg.Workspace
	}
	var note string
	if key == "" {
		key = s.cfg.AgentKey
	}
	if key == "" {
		key, note, err = s.generateKey()
		if err != nil {
			return "", err
		}
	}
	workspaces := []client.Workspace{{Name: filepath.Base(ws), Path: ws}}
	if client.WorkspaceTooShallow(ws) {
		// "/" and the directories right under it are refused as
		// workspaces: register none, the mails name each conversation's.
		workspaces = []client.Workspace{}
		note += fmt.Sprintf("\nThe directory %s is too near the top of the file system to register as a workspace; none was registered (each mail names its conversation's directory). Start the tool server in your project's directory, at least two levels deep, to register it.", ws)
	}
	gw := s.connect(url, key)
	agent, err := gw.Register(ctx, client.RegisterRequest{
		Name:       name,
		Platform:   platform,
		Workspaces: workspaces,
	})
	if err != nil {
		if client.StatusOf(err) == 401 {
			return "", fmt.Errorf("the gateway at %s does not know this agent key (starting %q)%s: an admin registers it with POST /api/v1/admin/agent-keys {\"agent_name\": %q, \"key_token\": <the key>}, then call connect_to_server again (%v)",
				url, keyPrefix(key), note, name, err)
		}
		return "", err
	}
	s.setGateway(gw)
	s.log.Info("connected to gateway", "gateway", url, "agent", agent.Name)
	return fmt.Sprintf("Connected to %s as agent %s (platform %s, status %s).%s\n", url, agent.Name, agent.Platform, agent.Status, note), nil
}

func keyPrefix(k string) string {
	if len(k) > 6 {
		return k[:6]
	}
	return k
}

func (s *Server) generateKey() (key, note string, err error) {
	path := s.cfg.AgentKeyFile
	if path == "" {
		return "", "", errors.New("no agent key configured and no key file path known: pass agent_key or set AGENTMAIL_AGENT_KEY")
	}
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), "", nil
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	key = "am_" + hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("save the new key to %s: %w", path, err)
	}
	_, err = f.WriteString(key + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", "", fmt.Errorf("save the new key to %s: %w", path, err)
	}
	return key, fmt.Sprintf(" A new agent key was generated and saved to %s (mode 0600)", path), nil
}
