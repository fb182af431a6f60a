package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
)

// Query parameters of the inbox listings for importance (issue 21 item 3).
var (
	queryImportance = OpenAPIParam{Name: "importance", Type: "string",
		Description: "keep only mails of these importance levels, comma-separated (low, normal, high, urgent)"}
	querySort = OpenAPIParam{Name: "sort", Enum: []string{"date", "importance"}, Default: "date",
		Description: "importance: most important first, then newest; the cursor of such a page is rank:mail_id"}
)

// ackRoutes are the acknowledgements of mails sent with ack_required
// (issue 21 item 2; gateway/acks.go): the same for agents (/mail) and
// people (/me/mail).
func ackRoutes() []Route {
	p := Prefix
	var out []Route
	for _, base := range []struct{ path, auth string }{{p + "/mail", AuthAgent}, {p + "/me/mail", AuthPerson}} {
		out = append(out,
			Route{Method: "POST", Path: base.path + "/{id}/ack", Auth: base.auth, Summary: "Acknowledge a mail sent with ack_required (reading is not acknowledging); a second call answers the first", Description: "Records that the caller acknowledges the mail; a second call answers the first acknowledgement. 404 an unknown mail, 409 the caller owes no acknowledgement for it (no ack_required, or the caller only sent it).",
				Response: client.AckResponse{}, Status: 200, Errors: []int{400, 401, 403, 404, 409, 500}, Answer: answer((*Server).handleAck)},
			Route{Method: "GET", Path: base.path + "/unacknowledged", Auth: base.auth, Summary: "Waiting for acknowledgement: mails the caller sent that are not acknowledged by all, and mails the caller has not acknowledged, oldest due first", Description: "Both directions by default; role narrows to one. 400 a bad parameter.",
				Response: client.AckWaitingList{}, Status: 200, Errors: errsRead, Answer: answer((*Server).handleUnacknowledged),
				Query: []OpenAPIParam{
					{Name: "role", Enum: []string{"sender", "recipient"}, Description: "only the mails the caller sent (sender) or owes (recipient); both when absent"},
					{Name: "overdue", Type: "boolean", Default: false, Description: "only those past their due time"},
					{Name: "limit", Type: "integer", Default: gateway.DefaultAckWaitingLimit, Description: "at most this many mails, 1 to 200"},
				}},
		)
	}
	return out
}

func (s *Server) handleAck(w http.ResponseWriter, r *http.Request) (*client.AckResponse, error) {
	return s.svc.AckMail(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
}

func (s *Server) handleUnacknowledged(w http.ResponseWriter, r *http.Request) (*client.AckWaitingList, error) {
	overdue, err := queryBool(r, "overdue", false)
	if err != nil {
		return nil, err
	}
	limit, err := queryInt(r, "limit", gateway.DefaultAckWaitingLimit, 1, gateway.MaxAckWaitingLimit)
	if err != nil {
		return nil, err
	}
	return s.svc.Unacknowledged(r.Context(), PrincipalOf(r), r.URL.Query().Get("role"), overdue, limit)
}
