package gateway

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Per-turn tokens (issue 12, point 9; docs/SECURITY.md).
//
// The agent key stays with the bridge. For each turn the bridge asks, with
// its agent key, for a turn token bound to the turn's session and hands
// only that token to the platform process and its tool server. A turn
// token authenticates as the agent with AuthKind AuthTurnToken and
// TurnSession set; what it may see is narrowed to that session in one
// place (visibility.go inTurnScope), so any other session answers what an
// unknown one answers (404). The routes a turn token may use at all are
// listed in the HTTP layer (httpapi turnTokenRoutes): not register,
// heartbeat, the event stream, the inbox, schedules or minting further
// tokens. A turn token dies when the bridge revokes it at the end of the
// turn, when its agent is shown offline (RevokeOfflineTurnTokens), when
// Config.TurnTokenTTL has passed since it was issued, or when the agent
// key that issued it is revoked or expires. Only the SHA-256 of the token
// is stored.

// DefaultTurnTokenTTL is the default bound of a turn token's life.
const DefaultTurnTokenTTL = 12 * time.Hour

// turnTokenPrefix starts every turn token.
const turnTokenPrefix = "amt_"

// CreateTurnToken issues a turn token for sessionID to the agent p, which
// must have authenticated with its agent key (a turn token cannot mint
// another: 403 turn_token_not_allowed). The session must be one the agent
// may see, else 404 session_not_found (the same answer as an unknown id);
// session_id empty is a 400. The token is in the answer once; it expires
// Config.TurnTokenTTL after now on the service clock.
func (s *Service) CreateTurnToken(ctx context.Context, p *Principal, req client.CreateTurnTokenRequest) (*client.TurnToken, error) {
	if p.AuthKind != AuthAgentKey {
		return nil, errTurnTokenNotAllowed
	}
	sessionID := strings.TrimSpace(req.SessionID)
	if sessionID == "" {
		return nil, Invalid("session_id", "session_id is empty", "send the id of the session the turn runs in")
	}
	token := RandomToken(turnTokenPrefix)
	row := store.TurnTokenRow{TokenID: store.NewID(), TokenHash: HashToken(token), AgentName: p.Name,
		SessionID: sessionID, KeyID: p.KeyID}
	err := s.Write(ctx, func(tx *Tx) error {
		if _, err := sessionFor(ctx, tx.Q, sessionID, p.Name); err != nil {
			return err
		}
		row.CreatedAt = tx.Now
		row.ExpiresAt = tx.Now.Add(s.Config.TurnTokenTTL)
		return tx.InsertTurnToken(ctx, row)
	})
	if err != nil {
		return nil, err
	}
	return &client.TurnToken{TokenID: row.TokenID, Token: token, SessionID: row.SessionID, ExpiresAt: row.ExpiresAt}, nil
}

// RevokeTurnToken revokes the agent's turn token tokenID at once (every
// replica reads turn tokens from the database at each use). Only the agent
// key may revoke (403 turn_token_not_allowed for a turn token); an unknown,
// foreign or already revoked token is a 404 turn_token_not_found.
func (s *Service) RevokeTurnToken(ctx context.Context, p *Principal, tokenID string) error {
	if p.AuthKind != AuthAgentKey {
		return errTurnTokenNotAllowed
	}
	return s.Write(ctx, func(tx *Tx) error {
		ok, err := tx.RevokeTurnToken(ctx, tokenID, p.Name, tx.Now)
		if err != nil {
			return err
		}
		if !ok {
			return NotFound("turn_token_not_found", "no such active turn token", "use the token_id the token was issued with")
		}
		return nil
	})
}

// authTurnToken resolves the turn token with token hash hash (AuthKey):
// 401 invalid_key when unknown, turn_token_revoked, turn_token_expired,
// and 401 key_revoked / key_expired when the agent key that issued it no
// longer works.
func (s *Service) authTurnToken(ctx context.Context, hash string) (*Principal, error) {
	q := s.Read()
	t, err := q.TurnTokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, Unauthorized("invalid_key", "the key is unknown")
	}
	if err != nil {
		return nil, err
	}
	now := s.Now()
	switch {
	case t.RevokedAt != nil:
		return nil, Unauthorized("turn_token_revoked", "the turn token was revoked: its turn has ended")
	case !now.Before(t.ExpiresAt):
		return nil, Unauthorized("turn_token_expired", "the turn token expired")
	}
	k, err := q.GetKey(ctx, t.KeyID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, Unauthorized("invalid_key", "the agent key that issued this turn token no longer exists")
	case err != nil:
		return nil, err
	case k.RevokedAt != nil:
		return nil, Unauthorized("key_revoked", "the agent key that issued this turn token was revoked")
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return nil, Unauthorized("key_expired", "the agent key that issued this turn token expired")
	}
	return &Principal{Kind: PrincipalAgent, Name: t.AgentName, AuthKind: AuthTurnToken, KeyID: t.TokenID, TurnSession: t.SessionID}, nil
}

// errTurnTokenNotAllowed answers what a turn token may not do.
var errTurnTokenNotAllowed = Forbidden("turn_token_not_allowed",
	"a turn token acts only within its own session's turn: it cannot register, send heartbeats, open the event stream, read the whole inbox, manage schedules, create or revoke keys or tokens, or reach sessions outside its own and those delegated from it",
	"the bridge does this with the agent key; from inside a turn, work in the turn's session or open a delegated session (name@path.new)")

// ErrTurnTokenNotAllowed is the 403 turn_token_not_allowed the HTTP layer
// answers for a route a turn token may not use.
var ErrTurnTokenNotAllowed = errTurnTokenNotAllowed

// SweepTurnTokens removes turn tokens that expired more than a day ago
// (they can never authenticate again); it answers how many.
func (s *Service) SweepTurnTokens(ctx context.Context) (int64, error) {
	var n int64
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		n, err = tx.DeleteTurnTokensBefore(ctx, tx.Now.Add(-24*time.Hour))
		return err
	})
	return n, err
}

// RevokeOfflineTurnTokens revokes the active turn tokens of every agent
// that is shown offline (not seen for Config.OnlineWithin, the threshold of
// AgentView) and was not seen since the token was issued: a bridge that
// died in the middle of a turn cannot revoke its token, and the token must
// not outlive it by its 12-hour bound. The gateway's fast sweep calls it,
// so a token dies within one sweep interval of its agent going offline; a
// bridge that comes back asks for new tokens. It answers how many it
// revoked.
func (s *Service) RevokeOfflineTurnTokens(ctx context.Context) (int64, error) {
	var n int64
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		n, err = tx.RevokeTurnTokensOfAgentsUnseenSince(ctx, tx.Now.Add(-s.Config.OnlineWithin), tx.Now)
		return err
	})
	return n, err
}

// turnScopeKey carries a turn token's restriction in a request context.
type turnScopeKey struct{}

// turnScope is the restriction of a turn token: agent may act in session
// only.
type turnScope struct{ agent, session string }

// WithPrincipal returns ctx carrying what visibility.go needs to know about
// the authenticated principal p: for a turn token, the one session it may
// act in. The HTTP layer calls it for every authenticated request; without
// it a turn token's principal would see what its agent sees.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	if p == nil || !p.IsTurnToken() {
		return ctx
	}
	return context.WithValue(ctx, turnScopeKey{}, turnScope{agent: p.Name, session: p.TurnSession})
}
