package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
)

// sessionRoutes are sessions as people see them (/me/sessions) and as
// their agents do (/sessions, W-7, B-3.3), with the runs reported in them
// (seed 004).
func sessionRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: p + "/me/sessions", Auth: AuthPerson, Summary: "Sessions the person takes part in, most recent first", Description: "Paged with next_cursor. 400 a bad parameter or cursor.", Response: client.SessionList{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleListSessions),
			Query: []OpenAPIParam{queryLimit(50), queryCursor}},
		{Method: "GET", Path: p + "/me/sessions/{id}", Auth: AuthPerson, Summary: "One session", Description: "Alias, title, workspace, agent, round budget and use. 404 an unknown session or one the person does not take part in.", Response: client.Session{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleGetSession)},
		{Method: "PATCH", Path: p + "/me/sessions/{id}", Auth: AuthPerson, Summary: "Change alias (manual), budget, or reset used rounds", Description: "Changes only the fields sent; an alias set here is manual and agents no longer rename it. 400 a bad or taken alias or a budget out of bounds, 404 an unknown session.", Request: client.UpdateSessionRequest{}, Response: client.Session{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleUpdateSession)},
		{Method: "GET", Path: p + "/me/sessions/{id}/mails", Auth: AuthPerson, Summary: "A session's mails, oldest first; next_cursor continues with the newer ones", Description: "400 a bad parameter or cursor, 404 an unknown session.", Response: client.MailList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleSessionMails),
			Query: []OpenAPIParam{queryLimit(50), queryCursor}},
		{Method: "GET", Path: p + "/me/sessions/{id}/runs", Auth: AuthPerson, Summary: "Runs of a session, newest first", Description: "The runs (turns) agents reported in the session, with state and timing. 404 an unknown session.", Response: client.RunList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleSessionRuns},
		{Method: "GET", Path: p + "/me/runs", Auth: AuthPerson, Summary: "Runs in the sessions the person takes part in", Description: "Running, idle and queued runs, newest first; with all=true every state (at most 200).", Response: client.RunList{}, Status: 200, Errors: errsPerson, Answer: answer((*Server).handleMyRuns),
			Query: []OpenAPIParam{{Name: "all", Type: "boolean", Description: "true: also ended runs (at most 200)"}}},
		{Method: "POST", Path: p + "/me/runs/{run_id}/stop", Auth: AuthPerson, Summary: "Stop a running or queued run (issue 16)", Description: "Records the stop request, sends the run's agent a run_stop event and ends the agent's reservations in the session; the bridge reports the run's end. 404 an unknown run or one of a session the person does not take part in, 409 run_not_running once the run ended.", Response: client.RunStopResponse{}, Status: 202, Errors: []int{401, 403, 404, 409, 500}, Answer: answer((*Server).handleStopRun)},
		{Method: "GET", Path: p + "/sessions/{id}", Auth: AuthAgent, Summary: "One session the agent takes part in", Description: "404 an unknown session or one the agent does not take part in.", Response: client.Session{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleGetSession)},
		{Method: "POST", Path: p + "/sessions/{id}/sync", Auth: AuthAgent, Summary: "Propose alias and title; answers the final alias (W-7)", Description: "The gateway keeps a manual alias and makes a proposed one unique. 400 a bad field, 404 an unknown session.", Request: client.SyncSessionRequest{}, Response: client.Session{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Answer: answer((*Server).handleSyncSession)},
		{Method: "PUT", Path: p + "/sessions/{id}/platform-session", Auth: AuthAgent, Summary: "Bind the platform's session id (B-3.3)", Description: "Stores the agent platform's own session id so later turns resume it. 400 a bad id, 404 an unknown session.", Request: client.BindPlatformSessionRequest{}, Response: client.Session{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handleBindPlatformSession},
		{Method: "GET", Path: p + "/sessions/{id}/runs", Auth: AuthAgent, Summary: "Runs of a session, newest first", Description: "The runs (turns) agents reported in the session, with state and timing. 404 an unknown session.", Response: client.RunList{}, Status: 200, Errors: errsRead, Handler: (*Server).handleSessionRuns},
		{Method: "GET", Path: p + "/runs", Auth: AuthAgent, Summary: "The agent's runs that have not ended (issue 16)", Description: "The calling agent's own runs in state running, queued or idle, oldest first (at most 200). A bridge lists them when it connects and ends the ones it no longer holds (left by a restart or a crash). Query instance_id: the calling bridge's instance; 409 bridge_instance_conflict while another instance holds the agent's bridge lease.", Response: client.RunList{}, Status: 200, Errors: []int{401, 403, 409, 500}, Query: []OpenAPIParam{{Name: "instance_id", Type: "string", Description: "the calling bridge's instance id (its bridge lease)"}}, Answer: answer((*Server).handleAgentOpenRuns)},
		{Method: "PUT", Path: p + "/runs/{run_id}", Auth: AuthAgent, Summary: "Report a run (upsert, seed 004)", Description: "Creates or updates the run with this id: state, timing, cost. 400 a bad field, 404 an unknown session.", Request: client.Run{}, Response: client.Run{}, Status: 200, Errors: []int{400, 401, 403, 404, 500}, Handler: (*Server).handlePutRun},
	}
}

func (s *Server) handleListSessions(w http.ResponseWriter, r *http.Request) (*client.SessionList, error) {
	limit, err := queryInt(r, "limit", 50, 1, maxPageLimit)
	if err != nil {
		return nil, err
	}
	l, next, err := s.svc.ListSessions(r.Context(), PrincipalOf(r), limit, r.URL.Query().Get("cursor"))
	if err != nil {
		return nil, err
	}
	l.NextCursor = next
	return l, nil
}

func (s *Server) handleGetSession(w http.ResponseWriter, r *http.Request) (*client.Session, error) {
	return s.svc.GetSession(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
}

func (s *Server) handleUpdateSession(w http.ResponseWriter, r *http.Request) (*client.Session, error) {
	var req client.UpdateSessionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.UpdateSession(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
}

func (s *Server) handleSessionMails(w http.ResponseWriter, r *http.Request) (*client.MailList, error) {
	limit, err := queryInt(r, "limit", 50, 1, maxPageLimit)
	if err != nil {
		return nil, err
	}
	return s.svc.SessionMails(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), limit, r.URL.Query().Get("cursor"))
}

func (s *Server) handleSyncSession(w http.ResponseWriter, r *http.Request) (*client.Session, error) {
	var req client.SyncSessionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.SyncSession(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
}

func (s *Server) handleBindPlatformSession(w http.ResponseWriter, r *http.Request) error {
	var req client.BindPlatformSessionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	v, err := s.svc.BindPlatformSession(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleSessionRuns(w http.ResponseWriter, r *http.Request) error {
	l, err := s.svc.SessionRuns(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) handleMyRuns(w http.ResponseWriter, r *http.Request) (*client.RunList, error) {
	return s.svc.MyRuns(r.Context(), PrincipalOf(r), r.URL.Query().Get("all") == "true")
}

func (s *Server) handleAgentOpenRuns(w http.ResponseWriter, r *http.Request) (*client.RunList, error) {
	return s.svc.AgentOpenRuns(r.Context(), PrincipalOf(r), r.URL.Query().Get("instance_id"))
}

func (s *Server) handleStopRun(w http.ResponseWriter, r *http.Request) (*client.RunStopResponse, error) {
	return s.svc.StopRun(r.Context(), PrincipalOf(r), chi.URLParam(r, "run_id"))
}

func (s *Server) handlePutRun(w http.ResponseWriter, r *http.Request) error {
	var req client.Run
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	run, err := s.svc.PutRun(r.Context(), PrincipalOf(r), chi.URLParam(r, "run_id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}
