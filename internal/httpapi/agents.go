package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
)

// agentRoutes are the agent's own registration and heartbeat (W-1, W-2,
// W-3), and the agent list people and admins read.
func agentRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: p + "/admin/agents", Auth: AuthAdmin, Summary: "List agents", Description: "Every agent with platform, workspaces, online status and round budget.", Response: client.AgentList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleListAgents)},
		{Method: "PATCH", Path: p + "/admin/agents/{name}", Auth: AuthAdmin, Summary: "Change an agent's default round budget", Description: "The round budget new sessions of this agent start with. 400 a budget out of bounds, 404 an unknown agent.", Request: client.UpdateAgentRequest{}, Response: client.Agent{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleUpdateAgent)},
		{Method: "GET", Path: p + "/agents", Auth: AuthPerson, Summary: "List agents with online status", Description: "Every agent with platform, workspaces and whether it is online.", Response: client.AgentList{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleListAgents)},
		{Method: "GET", Path: p + "/agents/{name}", Auth: AuthPerson, Summary: "One agent with models and sessions", Description: "The agent, its model catalogue and allowed models, and the sessions the caller may see. 404 an unknown agent.", Response: client.AgentDetail{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleGetAgent)},
		{Method: "POST", Path: p + "/agent/register", Auth: AuthAgent, Summary: "Register the agent (W-2)", Description: "Registers (or updates) the agent of the key: platform, version and workspaces. The name must be the key's agent. instance takes the agent's bridge lease (one bridge process per agent). 400 a bad field; 409 bridge_instance_conflict while another bridge instance of the agent holds the lease.", Request: client.RegisterRequest{}, Response: client.Agent{}, Status: 200, Errors: []int{400, 401, 403, 409, 500}, Answer: answer((*Server).handleRegister)},
		{Method: "POST", Path: p + "/agent/heartbeat", Auth: AuthAgent, Summary: "Heartbeat, mirror and catalogue; answers the model scope (W-3)", Description: "Marks the agent online, updates its mirror of sessions and its model catalogue, and answers the models it may use; instance renews the agent's bridge lease. 400 a bad field; 409 bridge_instance_conflict when another bridge instance of the agent holds the lease.", Request: client.HeartbeatRequest{}, Response: client.HeartbeatResponse{}, Status: 200, Errors: []int{400, 401, 403, 409, 500}, Answer: answer((*Server).handleHeartbeat)},
		{Method: "GET", Path: p + "/agent/models/allowed", Auth: AuthAgent, Summary: "The agent's model scope", Description: "The models the agent may use in priority order, or unrestricted.", Response: client.AllowedModels{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleAllowedModels)},
	}
}

func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) (*client.Agent, error) {
	var req client.RegisterRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.Register(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleHeartbeat(w http.ResponseWriter, r *http.Request) (*client.HeartbeatResponse, error) {
	var req client.HeartbeatRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &req); err != nil {
			return nil, err
		}
	}
	return s.svc.Heartbeat(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleAllowedModels(w http.ResponseWriter, r *http.Request) (*client.AllowedModels, error) {
	return s.svc.AllowedModels(r.Context(), PrincipalOf(r).Name)
}

func (s *Server) handleListAgents(w http.ResponseWriter, r *http.Request) (*client.AgentList, error) {
	return s.svc.ListAgents(r.Context())
}

func (s *Server) handleGetAgent(w http.ResponseWriter, r *http.Request) (*client.AgentDetail, error) {
	return s.svc.AgentDetail(r.Context(), chi.URLParam(r, "name"), PrincipalOf(r))
}

func (s *Server) handleUpdateAgent(w http.ResponseWriter, r *http.Request) (*client.Agent, error) {
	var req client.UpdateAgentRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.UpdateAgent(r.Context(), chi.URLParam(r, "name"), req)
}
