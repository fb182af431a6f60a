package client

import "context"

// CreateTurnToken asks for a per-turn token for one session
// (POST /api/v1/agent/turn-tokens); the client's token must be the agent
// key. Errors: 404 session_not_found for a session the agent does not take
// part in, 403 turn_token_not_allowed when the client's token is itself a
// turn token.
func (c *Client) CreateTurnToken(ctx context.Context, sessionID string) (*TurnToken, error) {
	return postAs[TurnToken](ctx, c, apiPath("/agent/turn-tokens"), CreateTurnTokenRequest{SessionID: sessionID})
}

// RevokeTurnToken revokes one of the agent's turn tokens
// (DELETE /api/v1/agent/turn-tokens/{token_id}); from then on the token is
// refused with 401 turn_token_revoked. Errors: 404 turn_token_not_found for
// an unknown, foreign or already revoked token.
func (c *Client) RevokeTurnToken(ctx context.Context, tokenID string) error {
	return c.delete(ctx, apiPath("/agent/turn-tokens/%s", tokenID))
}
