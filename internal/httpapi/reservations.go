package httpapi

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
)

// reservationRoutes are the file reservations of agents (/reservations)
// and what people see of them (/me/reservations), issue 21 item 1;
// gateway/reservations.go holds the rules.
func reservationRoutes() []Route {
	p := Prefix
	ws := OpenAPIParam{Name: "workspace", Type: "string", Description: "absolute directory; absent: the caller's own reservations (agents) or those of every workspace of the person's sessions"}
	return []Route{
		{Method: "POST", Path: p + "/reservations", Auth: AuthAgent, Summary: "Reserve paths or globs of a workspace (1 to 100 paths, ttl_minutes 1 to 1440, default 60); conflicts are named, exclusive ones refuse the path", Description: "Advisory: the answer names overlapping reservations of other agents; an exclusive reservation refuses an overlapping one. 400 a bad path, glob or ttl, 404 a workspace the agent does not have, 409 too many reservations held.",
			Request: client.ReserveRequest{}, Response: client.ReserveResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 500}, Answer: answer((*Server).handleReserve)},
		{Method: "GET", Path: p + "/reservations", Auth: AuthAgent, Summary: "Active reservations that can touch a workspace, or the agent's own", Description: "Without workspace: the agent's own reservations. 400 a bad workspace.",
			Response: client.ReservationList{}, Status: 200, Errors: errsRead, Query: []OpenAPIParam{ws}, Answer: answer((*Server).handleListReservations)},
		{Method: "POST", Path: p + "/reservations/renew", Auth: AuthAgent, Summary: "Extend the agent's own reservations (by id, by path, or all of a workspace)", Description: "Sets each selected reservation's expiry ttl_minutes from now and answers those renewed (ids that select nothing renew nothing). 400 a bad selection, such as paths without their workspace.",
			Request: client.ReservationSelect{}, Response: client.ReservationList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleRenewReservations)},
		{Method: "POST", Path: p + "/reservations/release", Auth: AuthAgent, Summary: "End the agent's own reservations (by id, by path, or all of a workspace)", Description: "Answers the reservations ended (ids that select nothing end nothing). 400 a bad selection, such as paths without their workspace.",
			Request: client.ReservationSelect{}, Response: client.ReservationList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleReleaseReservations)},
		{Method: "POST", Path: p + "/reservations/check", Auth: AuthAgent, Summary: "Which of these paths other agents hold (the pre-commit guard)", Description: "For each path, the reservations of other agents that cover it. 400 a bad path.",
			Request: client.ReservationCheckRequest{}, Response: client.ReservationCheck{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleCheckReservations)},
		{Method: "GET", Path: p + "/me/reservations", Auth: AuthPerson, Summary: "Reservations of the workspaces of the sessions the person takes part in", Description: "Filtered by workspace when given. 400 a bad workspace.",
			Response: client.ReservationList{}, Status: 200, Errors: errsRead, Query: []OpenAPIParam{ws}, Answer: answer((*Server).handleListReservations)},
		{Method: "DELETE", Path: p + "/me/reservations/{id}", Auth: AuthPerson, Summary: "Release any reservation the person sees", Description: "404 an unknown reservation or one the person does not see.",
			Status: 204, Errors: errsRead, Answer: noBody((*Server).handlePersonRelease)},
		{Method: "POST", Path: p + "/me/reservations/check", Auth: AuthPerson, Summary: "Which of these paths agents hold (the pre-commit guard with a user key)", Description: "For each path, the reservations that cover it. 400 a bad path.",
			Request: client.ReservationCheckRequest{}, Response: client.ReservationCheck{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleCheckReservations)},
	}
}

func (s *Server) handleReserve(w http.ResponseWriter, r *http.Request) (*client.ReserveResponse, error) {
	var req client.ReserveRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.Reserve(r.Context(), PrincipalOf(r), req)
}

func (s *Server) handleListReservations(w http.ResponseWriter, r *http.Request) (*client.ReservationList, error) {
	return s.svc.ListReservations(r.Context(), PrincipalOf(r), r.URL.Query().Get("workspace"))
}

func (s *Server) handleRenewReservations(w http.ResponseWriter, r *http.Request) (*client.ReservationList, error) {
	var sel client.ReservationSelect
	if err := decodeJSON(w, r, &sel); err != nil {
		return nil, err
	}
	return s.svc.RenewReservations(r.Context(), PrincipalOf(r), sel)
}

func (s *Server) handleReleaseReservations(w http.ResponseWriter, r *http.Request) (*client.ReservationList, error) {
	var sel client.ReservationSelect
	if err := decodeJSON(w, r, &sel); err != nil {
		return nil, err
	}
	return s.svc.ReleaseReservations(r.Context(), PrincipalOf(r), sel)
}

func (s *Server) handlePersonRelease(w http.ResponseWriter, r *http.Request) error {
	return s.svc.PersonReleaseReservation(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
}

func (s *Server) handleCheckReservations(w http.ResponseWriter, r *http.Request) (*client.ReservationCheck, error) {
	var req client.ReservationCheckRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	return s.svc.CheckReservations(r.Context(), PrincipalOf(r), req)
}

// sweepReservations ends expired reservations and those of holders offline
// past the gateway's limit (a round of the fast sweep, sweeps.go).
func (s *Server) sweepReservations(ctx context.Context) {
	if n, err := s.svc.SweepReservations(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("reservation sweep failed", "err", err)
	} else if n > 0 {
		s.log.Info("reservations ended", "count", n)
	}
}
