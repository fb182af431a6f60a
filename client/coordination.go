package client

import (
	"context"
	"net/url"
	"strconv"
)

// Reservations and acknowledgements (issue 21). The methods without "Me"
// are the agent side (agent key or turn token); the "Me" ones are a
// person's (cookie or user key).

// Reserve asks for reservations of paths in a workspace
// (POST /api/v1/reservations). A path another agent holds is named in
// Conflicts; an exclusive conflict leaves it out of Granted and in
// Refused. Errors: 400 naming the field, 404 workspace_not_found for a
// workspace the agent has no session or registration in.
func (c *Client) Reserve(ctx context.Context, req ReserveRequest) (*ReserveResponse, error) {
	return postAs[ReserveResponse](ctx, c, apiPath("/reservations"), req)
}

// Reservations lists the active reservations that can touch paths of the
// workspace (GET /api/v1/reservations?workspace=); workspace "" lists the
// agent's own.
func (c *Client) Reservations(ctx context.Context, workspace string) (*ReservationList, error) {
	return getAs[ReservationList](ctx, c, apiPath("/reservations"), workspaceQuery(workspace))
}

// RenewReservations extends the agent's own reservations
// (POST /api/v1/reservations/renew) and answers the renewed ones.
func (c *Client) RenewReservations(ctx context.Context, sel ReservationSelect) (*ReservationList, error) {
	return postAs[ReservationList](ctx, c, apiPath("/reservations/renew"), sel)
}

// ReleaseReservations ends the agent's own reservations
// (POST /api/v1/reservations/release) and answers the released ones.
func (c *Client) ReleaseReservations(ctx context.Context, sel ReservationSelect) (*ReservationList, error) {
	return postAs[ReservationList](ctx, c, apiPath("/reservations/release"), sel)
}

// CheckReservations answers which of the paths other agents hold
// (POST /api/v1/reservations/check), for the pre-commit guard.
func (c *Client) CheckReservations(ctx context.Context, req ReservationCheckRequest) (*ReservationCheck, error) {
	return postAs[ReservationCheck](ctx, c, apiPath("/reservations/check"), req)
}

// MeReservations lists the reservations the person may see
// (GET /api/v1/me/reservations?workspace=): of the workspaces of the
// sessions the person takes part in; workspace "" lists all of those.
func (c *Client) MeReservations(ctx context.Context, workspace string) (*ReservationList, error) {
	return getAs[ReservationList](ctx, c, apiPath("/me/reservations"), workspaceQuery(workspace))
}

// MeReleaseReservation ends any reservation the person may see
// (DELETE /api/v1/me/reservations/{id}); 404 reservation_not_found for
// one the person may not see.
func (c *Client) MeReleaseReservation(ctx context.Context, id string) error {
	return c.delete(ctx, apiPath("/me/reservations/%s", id))
}

// MeCheckReservations is CheckReservations for a person
// (POST /api/v1/me/reservations/check).
func (c *Client) MeCheckReservations(ctx context.Context, req ReservationCheckRequest) (*ReservationCheck, error) {
	return postAs[ReservationCheck](ctx, c, apiPath("/me/reservations/check"), req)
}

// AckMail acknowledges a mail sent to the agent with ack_required
// (POST /api/v1/mail/{id}/ack). Errors: 404 mail_not_found, 409
// ack_not_required.
func (c *Client) AckMail(ctx context.Context, id string) (*AckResponse, error) {
	return postAs[AckResponse](ctx, c, apiPath("/mail/%s/ack", id), struct{}{})
}

// MeAckMail is AckMail for a person (POST /api/v1/me/mail/{id}/ack).
func (c *Client) MeAckMail(ctx context.Context, id string) (*AckResponse, error) {
	return postAs[AckResponse](ctx, c, apiPath("/me/mail/%s/ack", id), struct{}{})
}

// Unacknowledged is the agent's waiting-for-acknowledgement view
// (GET /api/v1/mail/unacknowledged).
func (c *Client) Unacknowledged(ctx context.Context, q AckWaitingQuery) (*AckWaitingList, error) {
	return getAs[AckWaitingList](ctx, c, apiPath("/mail/unacknowledged"), q.values())
}

// MeUnacknowledged is the person's waiting-for-acknowledgement view
// (GET /api/v1/me/mail/unacknowledged).
func (c *Client) MeUnacknowledged(ctx context.Context, q AckWaitingQuery) (*AckWaitingList, error) {
	return getAs[AckWaitingList](ctx, c, apiPath("/me/mail/unacknowledged"), q.values())
}

func (q AckWaitingQuery) values() url.Values {
	v := url.Values{}
	if q.Role != "" {
		v.Set("role", q.Role)
	}
	if q.Overdue {
		v.Set("overdue", "true")
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

func workspaceQuery(ws string) url.Values {
	v := url.Values{}
	if ws != "" {
		v.Set("workspace", ws)
	}
	return v
}
