package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// modelScopeRoutes are the admin's view and setting of an agent's model
// scope (W-3).
func modelScopeRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: p + "/admin/agents/{name}/models", Auth: AuthAdmin, Summary: "An agent's model catalogue and allowed list", Description: "The agent with its catalogue (the models its platform reported) and its allowed list. 404 an unknown agent.",
			Response: client.AgentDetail{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleAdminAgentModels)},
		{Method: "PUT", Path: p + "/admin/agents/{name}/models", Auth: AuthAdmin, Summary: "Set an agent's allowed models in priority order, or make it unrestricted", Description: "Send {\"allowed_models\": [...]} to restrict the agent to those models in priority order, or {\"models_unrestricted\": true} to lift the restriction. 400 a model not in the catalogue, a duplicate, or a non-empty allowed_models together with models_unrestricted true; 404 an unknown agent.",
			Request: client.SetAllowedModelsRequest{}, Response: client.AllowedModels{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleSetAgentModels)},
	}
}

func (s *Server) handleAdminAgentModels(w http.ResponseWriter, r *http.Request) (*client.AgentDetail, error) {
	return s.svc.AgentDetail(r.Context(), chi.URLParam(r, "name"), nil)
}

// handleSetAgentModels reads the body twice: as client.AllowedModels, and
// to tell an absent or null allowed_models from [] (an absent list without
// models_unrestricted would silently allow nothing, so it is a 400).
func (s *Server) handleSetAgentModels(w http.ResponseWriter, r *http.Request) (*client.AllowedModels, error) {
	var req client.SetAllowedModelsRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	switch {
	case req.ModelsUnrestricted && req.AllowedModels != nil:
		return nil, gateway.Invalid("allowed_models", "allowed_models and models_unrestricted true cannot be sent together, not even with []",
			`send {"models_unrestricted": true} alone to remove the list, or the list alone`)
	case !req.ModelsUnrestricted && req.AllowedModels == nil:
		return nil, gateway.Invalid("allowed_models", "allowed_models is missing",
			`send the list in priority order ([] allows nothing), or {"models_unrestricted": true} to remove the scope`)
	}
	set := client.AllowedModels{ModelsUnrestricted: req.ModelsUnrestricted}
	if req.AllowedModels != nil {
		set.AllowedModels = *req.AllowedModels
	}
	return s.svc.SetAllowedModels(r.Context(), chi.URLParam(r, "name"), set)
}
