package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// MaxAllowedModels bounds an agent's allowed-model list.
const MaxAllowedModels = 100

// SetAllowedModels stores an agent's model scope (PUT
// /admin/agents/{name}/models; W-3, B-2.2, D-3): an ordered list of
// {provider, model} (priority order, first tried first), or, with
// models_unrestricted true and no list, no scope at all (the platform's
// default model). An empty list with models_unrestricted false allows
// nothing, which differs from unrestricted. A list together with
// models_unrestricted true is contradictory (400), as are an empty model
// and the same model twice. An unknown agent is a 404. The heartbeat
// returns the new scope within one period.
func (s *Service) SetAllowedModels(ctx context.Context, name string, req client.AllowedModels) (*client.AllowedModels, error) {
	name = NormalizeName(name) // names are case-insensitive
	var list []store.ModelRow
	if req.ModelsUnrestricted {
		if len(req.AllowedModels) > 0 {
			return nil, Invalid("allowed_models", "allowed_models must be empty or null when models_unrestricted is true",
				"send either a list with models_unrestricted false, or models_unrestricted true alone")
		}
	} else {
		if len(req.AllowedModels) > MaxAllowedModels {
			return nil, Invalid("allowed_models", fmt.Sprintf("at most %d models", MaxAllowedModels), "")
		}
		list = make([]store.ModelRow, 0, len(req.AllowedModels))
		seen := map[string]bool{}
		for i, m := range req.AllowedModels {
			prov, model := strings.TrimSpace(m.Provider), strings.TrimSpace(m.Model)
			if model == "" {
				return nil, Invalid(fmt.Sprintf("allowed_models[%d].model", i), "model is required", "")
			}
			key := prov + "\x00" + model
			if seen[key] {
				return nil, Invalid(fmt.Sprintf("allowed_models[%d]", i), fmt.Sprintf("%s/%s is listed twice", prov, model), "list each model once, in priority order")
			}
			seen[key] = true
			list = append(list, store.ModelRow{Provider: prov, Model: model})
		}
	}
	err := s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.GetAgent(ctx, name); errors.Is(err, store.ErrNotFound) {
			return agentNotFound(name)
		} else if err != nil {
			return err
		}
		return tx.SetAllowedModels(ctx, name, list)
	})
	if err != nil {
		return nil, err
	}
	s.Log.Info("model scope set", "agent", name, "models", len(list), "unrestricted", list == nil)
	return s.AllowedModels(ctx, name)
}
