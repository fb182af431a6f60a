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
	var out ReserveResponse
	if err := c.postJSON(ctx, apiPath("/reservations"), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Reservations lists the active reservations that can touch paths of the
// workspace (GET /api/v1/reservations?workspace=); workspace "" lists the
// agent's own.
func (c *Client) Reservations(ctx context.Context, workspace string) (*ReservationList, error) {
	var out ReservationList
	if err := c.getJSON(ctx, apiPath("/reservations"), workspaceQuery(workspace), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RenewReservations extends the agent's own reservations
// (POST /api/v1/reservations/renew) and answers the renewed ones.
func (c *Client) RenewReservations(ctx context.Context, sel ReservationSelect) (*ReservationList, error) {
	var out ReservationList
	if err := c.postJSON(ctx, apiPath("/reservations/renew"), sel, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReleaseReservations ends the agent's own reservations
// (POST /api/v1/reservations/release) and answers the released ones.
func (c *Client) ReleaseReservations(ctx context.Context, sel ReservationSelect) (*ReservationList, error) {
	var out ReservationList
	if err := c.postJSON(ctx, apiPath("/reservations/release"), sel, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CheckReservations answers which of the paths other agents hold
// (POST /api/v1/reservations/check), for the pre-commit guard.
func (c *Client) CheckReservations(ctx context.Context, req ReservationCheckRequest) (*ReservationCheck, error) {
	var out ReservationCheck
	if err := c.postJSON(ctx, apiPath("/reservations/check"), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// MeReservations lists the reservations the person may see
// (GET /api/v1/me/reservations?workspace=): of the workspaces of the
// sessions the person takes part in; workspace "" lists all of those.
func (c *Client) MeReservations(ctx context.Context, workspace string) (*ReservationList, error) {
	var out ReservationList
	if err := c.getJSON(ctx, apiPath("/me/reservations"), workspaceQuery(workspace), &out); err != nil {
		return nil, err
	}
	return &out, nil
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
	var out ReservationCheck
	if err := c.postJSON(ctx, apiPath("/me/reservations/check"), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AckMail acknowledges a mail sent to the agent with ack_required
// (POST /api/v1/mail/{id}/ack). Errors: 404 mail_not_found, 409
// ack_not_required.
func (c *Client) AckMail(ctx context.Context, id string) (*AckResponse, error) {
	var out AckResponse
	if err := c.postJSON(ctx, apiPath("/mail/%s/ack", id), struct{}{}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// MeAckMail is AckMail for a person (POST /api/v1/me/mail/{id}/ack).
func (c *Client) MeAckMail(ctx context.Context, id string) (*AckResponse, error) {
	var out AckResponse
	if err := c.postJSON(ctx, apiPath("/me/mail/%s/ack", id), struct{}{}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Unacknowledged is the agent's waiting-for-acknowledgement view
// (GET /api/v1/mail/unacknowledged).
func (c *Client) Unacknowledged(ctx context.Context, q AckWaitingQuery) (*AckWaitingList, error) {
	var out AckWaitingList
	if err := c.getJSON(ctx, apiPath("/mail/unacknowledged"), q.values(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// MeUnacknowledged is the person's waiting-for-acknowledgement view
// (GET /api/v1/me/mail/unacknowledged).
func (c *Client) MeUnacknowledged(ctx context.Context, q AckWaitingQuery) (*AckWaitingList, error) {
	var out AckWaitingList
	if err := c.getJSON(ctx, apiPath("/me/mail/unacknowledged"), q.values(), &out); err != nil {
		return nil, err
	}
	return &out, nil
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
