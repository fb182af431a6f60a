package bridge

import (
	"context"
	"log/slog"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// Per-turn tokens (issue 12, point 9). The agent key stays in the bridge:
// for each turn the core asks the gateway for a turn token bound to the
// turn's session (POST /api/v1/agent/turn-tokens) and gives the platform's
// AgentMail tool server only that token, in TurnRequest.ToolEnv under
// TurnTokenEnv. The token acts as the agent within that session only and
// is revoked when the turn ends (DELETE /api/v1/agent/turn-tokens/{id});
// the gateway also lets it expire after its bound (12 h by default).
// Adapters never receive the agent key (Env has none), and PlatformEnviron
// keeps the bridge's own credentials out of every platform process.

// TurnTokenEnv is the tool server's variable carrying the turn token.
const TurnTokenEnv = "AGENTMAIL_TURN_TOKEN"

// secretEnvNames are the bridge's credentials, never inherited by a
// platform process or anything it starts.
var secretEnvNames = map[string]bool{
	"AGENTMAIL_AGENT_KEY":    true,
	"AGENTMAIL_AGENT_SECRET": true,
	TurnTokenEnv:             true,
}

// PlatformEnviron returns base (an os.Environ-style list) without the
// bridge's credentials: AGENTMAIL_AGENT_KEY, AGENTMAIL_AGENT_SECRET and
// AGENTMAIL_TURN_TOKEN. Every adapter builds its platform process's
// environment from it, so a key set for the bridge never reaches the
// platform's own shell tool. The turn's token reaches the tool server
// through its configuration (ToolEnv) only.
func PlatformEnviron(base []string) []string {
	out := make([]string, 0, len(base))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !secretEnvNames[k] {
			out = append(out, kv)
		}
	}
	return out
}

// turnToken asks for the turn's token; nil when the gateway refuses or
// cannot be reached (logged): the turn then runs with tools that hold no
// credentials, never with the agent key.
func (b *Bridge) turnToken(ctx context.Context, log *slog.Logger, sessionID string) *client.TurnToken {
	tok, err := b.gw.CreateTurnToken(ctx, sessionID)
	if err != nil {
		log.Error("no turn token for this turn; the AgentMail tools run without credentials", "err", err)
		return nil
	}
	return tok
}

// revokeTurnToken revokes the turn's token at the end of the turn, also
// when the bridge is stopping (a bounded call outside ctx's cancellation).
func (b *Bridge) revokeTurnToken(ctx context.Context, log *slog.Logger, tok *client.TurnToken) {
	if tok == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runReportTimeout)
	defer cancel()
	if err := b.gw.RevokeTurnToken(rctx, tok.TokenID); err != nil {
		log.Warn("revoking the turn token failed; it expires by itself", "token_id", tok.TokenID, "expires_at", tok.ExpiresAt, "err", err)
	}
}
