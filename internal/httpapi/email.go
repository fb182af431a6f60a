package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/emailchannel"
	"github.com/agentmail/agentmail/internal/events"
	"github.com/agentmail/agentmail/internal/gateway"
)

// emailRoutes are the routes of the email channel (issue 20): a person's
// address, its verification and the notification preference.
func emailRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "PATCH", Path: p + "/me", Auth: AuthPerson, Summary: "Set the person's language, email address (a code is mailed to it) or notification preference", Description: "Changes only the fields sent. A new email address is pending until confirmed with POST /me/email/verify. 400 a bad field, 409 an address another person confirmed, 429 codes requested too often, 503 the gateway sends no email.",
			Request: client.UpdateMeRequest{}, Response: client.Me{}, Status: 200, Errors: []int{400, 401, 403, 409, 429, 500, 503}, Handler: (*Server).handleUpdateMe},
		{Method: "POST", Path: p + "/me/email/verify", Auth: AuthPerson, Summary: "Confirm the pending email address with the mailed code or link token", Description: "Send code or token. 400 wrong_code, 409 no address pending, the code expired or its attempts are used up, or another person confirmed the address meanwhile; 503 the gateway sends no email.",
			Request: client.VerifyEmailRequest{}, Response: client.Me{}, Status: 200, Errors: []int{400, 401, 403, 409, 500, 503}, Handler: (*Server).handleVerifyEmail},
	}
}

// SetEmailChannel gives the server the email channel (nil: the gateway
// sends no email).
func (s *Server) SetEmailChannel(c *emailchannel.Channel) { s.email = c }

// me answers the person's Me with the email fields.
func (s *Server) me(r *http.Request) (client.Me, error) {
	p := PrincipalOf(r)
	me := client.Me{Username: p.Name, Role: p.Role, AuthKind: p.AuthKind}
	if p.AuthKind == gateway.AuthCookie {
		me.CSRFToken = p.CSRFToken
	}
	lang, err := s.svc.Language(r.Context(), p.Name)
	if err != nil {
		return me, err
	}
	me.Language = lang
	if s.email != nil {
		err = s.email.Fill(r.Context(), p.Name, &me)
	} else {
		err = emailchannel.FillUnavailable(r.Context(), s.svc.Read(), p.Name, &me)
	}
	return me, err
}

func (s *Server) handleUpdateMe(w http.ResponseWriter, r *http.Request) error {
	var req client.UpdateMeRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Language != nil {
		if err := s.svc.SetLanguage(r.Context(), PrincipalOf(r), *req.Language); err != nil {
			return err
		}
	}
	if req.Email == nil && req.EmailNotify == nil {
		return s.writeMe(w, r)
	}
	if s.email == nil {
		return emailchannel.Unavailable()
	}
	if err := s.email.Update(r.Context(), PrincipalOf(r), req); err != nil {
		return err
	}
	return s.writeMe(w, r)
}

func (s *Server) handleVerifyEmail(w http.ResponseWriter, r *http.Request) error {
	var req client.VerifyEmailRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if s.email == nil {
		return emailchannel.Unavailable()
	}
	if err := s.email.Verify(r.Context(), PrincipalOf(r), req); err != nil {
		return err
	}
	return s.writeMe(w, r)
}

func (s *Server) writeMe(w http.ResponseWriter, r *http.Request) error {
	me, err := s.me(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, me)
	return nil
}

// emailReadiness adds the relay's state to /readyz (never making it fail:
// mail waits in the outbox while the relay is down). The relay's own error
// text (host names, its answers to the gateway's credentials) is shown to
// an admin only; everyone else sees the status, and the log has the text
// (logReadinessError).
func (s *Server) emailReadiness(r *http.Request, body map[string]string) {
	if s.email == nil {
		return
	}
	st := s.email.State(r.Context())
	body["email_relay"] = st.Status
	if st.Error != "" {
		s.logReadinessError(&s.lastRelayError, "the email relay is failing", st.Error)
		if p := PrincipalOf(r); p != nil && p.IsAdmin() {
			body["email_relay_error"] = st.Error
		}
	}
	body["email_pending"] = strconv.Itoa(st.Pending)
}

// startEmail builds and starts the email channel over the gateway's
// attachment store and wakes it after every commit that wrote events.
func startEmail(ctx context.Context, svc *gateway.Service, srv *Server, hub *events.Hub, cfg emailchannel.Config, log *slog.Logger) (*emailchannel.Channel, error) {

	ch, err := emailchannel.New(svc, srv.blobs, srv.opt.MaxAttachmentBytes, cfg, log)
	if err != nil {
		return nil, err
	}
	if err := ch.Start(ctx); err != nil {
		return nil, err
	}
	srv.SetEmailChannel(ch)
	svc.Notifier = notifiers{hub, ch}
	return ch, nil
}

// notifiers wakes each of them.
type notifiers []gateway.Notifier

func (n notifiers) Notify() {
	for _, x := range n {
		x.Notify()
	}
}
