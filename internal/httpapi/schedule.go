package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
)

// scheduleRoutes are the schedule routes (seed 001 change note; issue 3
// item 3): the same for agents (/schedules) and people (/me/schedules);
// each owner sees only their own schedules.
func scheduleRoutes() []Route {
	p := Prefix
	var out []Route
	for _, base := range []struct{ path, auth string }{{p + "/schedules", AuthAgent}, {p + "/me/schedules", AuthPerson}} {
		out = append(out,
			Route{Method: "POST", Path: base.path, Auth: base.auth, Summary: "Create a reminder", Description: "A mail the gateway sends to the caller (or into a session) at the given time, once or repeating. 400 a bad time or field, 404 an unknown session, 409 the caller has reached the reminder limit.",
				Request: client.CreateScheduleRequest{}, Response: client.Schedule{}, Status: 201, Errors: []int{400, 401, 403, 404, 409, 500}, Answer: answer((*Server).handleCreateSchedule)},
			Route{Method: "GET", Path: base.path, Auth: base.auth, Summary: "List the caller's reminders (with a hint near the limit)", Description: "Every reminder of the caller, next due first; hint is set at 75 % of the limit.",
				Response: client.ScheduleList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleListSchedules)},
			Route{Method: "PATCH", Path: base.path + "/{id}", Auth: base.auth, Summary: "Change only the fields sent", Description: "Changes a reminder of the caller. 400 a bad field, 404 an unknown reminder or one of another owner.",
				Request: client.UpdateScheduleRequest{}, Response: client.Schedule{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleUpdateSchedule)},
			Route{Method: "DELETE", Path: base.path + "/{id}", Auth: base.auth, Summary: "Delete a reminder", Description: "404 an unknown reminder or one of another owner.",
				Status: 204, Errors: errsRead, Answer: noBody((*Server).handleDeleteSchedule)},
		)
	}
	return out
}

func (s *Server) handleCreateSchedule(w http.ResponseWriter, r *http.Request) (*client.Schedule, error) {
	var req client.CreateScheduleRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.CreateSchedule(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleListSchedules(w http.ResponseWriter, r *http.Request) (*client.ScheduleList, error) {
	return s.svc.ListSchedules(r.Context(), PrincipalOf(r))
}

func (s *Server) handleUpdateSchedule(w http.ResponseWriter, r *http.Request) (*client.Schedule, error) {
	var req client.UpdateScheduleRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.UpdateSchedule(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
}

func (s *Server) handleDeleteSchedule(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.DeleteSchedule(r.Context(), PrincipalOf(r), chi.URLParam(r, "id")); err != nil {
		return err
	}
	return nil
}
