package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// sessionChain is the delegation chain around a mail's session (issue 15
// point 6): the origins above it, top first, the session itself, and the
// sessions delegated from it, as the person may see them.
type sessionChain struct {
	up          []client.SessionRef // the origin chain, the person's conversation first
	self        client.SessionRef
	delegations []client.SessionRef
}

// maxChainShown bounds the walk up the origin chain (the gateway's
// default depth is 4).
const maxChainShown = 8

// readSessionChain reads the session id and its origins with GET
// /me/sessions/{id}; nil when the session has neither origin nor
// delegations, or cannot be read (the mail is shown without it).
func readSessionChain(ctx context.Context, c *client.Client, id string) *sessionChain {
	if id == "" {
		return nil
	}
	s, err := c.MeSession(ctx, id)
	if err != nil {
		return nil
	}
	ch := &sessionChain{self: refOf(s), delegations: s.Delegations}
	for o := s.Origin; o != nil && len(ch.up) < maxChainShown; {
		ch.up = append([]client.SessionRef{*o}, ch.up...)
		up, err := c.MeSession(ctx, o.SessionID)
		if err != nil {
			break
		}
		o = up.Origin
	}
	if len(ch.up) == 0 && len(ch.delegations) == 0 {
		return nil
	}
	return ch
}

func refOf(s *client.Session) client.SessionRef {
	return client.SessionRef{SessionID: s.SessionID, Alias: s.Alias, Subject: s.Subject, AgentName: s.AgentName,
		UsedRounds: s.UsedRounds, BudgetMax: s.BudgetMax}
}

// print writes the chain: "Delegated from:" with the origins, top first,
// down to this session, then one "Delegated to AGENT: ALIAS (USED/MAX
// rounds)" line per session delegated from it. A nil chain prints nothing.
func (ch *sessionChain) print(w io.Writer, l lang) {
	if ch == nil {
		return
	}
	if len(ch.up) > 0 {
		steps := make([]string, 0, len(ch.up)+1)
		for _, o := range ch.up {
			steps = append(steps, refText(o))
		}
		steps = append(steps, refText(ch.self)+l.S(" (this session)"))
		fmt.Fprint(w, l.F("Delegated from: %s\n", strings.Join(steps, " > ")))
	}
	for _, d := range ch.delegations {
		fmt.Fprint(w, l.F("Delegated to %s: %s (%s)\n", oneLine(printable(d.AgentName), 60), oneLine(printable(d.Alias), 80), roundsText(l, d)))
	}
}

// refText is "alias (agent)", or the alias alone for a session with no agent.
func refText(r client.SessionRef) string {
	t := oneLine(printable(r.Alias), 80)
	if r.AgentName != "" {
		t += " (" + oneLine(printable(r.AgentName), 60) + ")"
	}
	return t
}

// roundsText is the session's own rounds: "2/20 rounds", or "2 rounds, no
// limit" for an unlimited budget.
func roundsText(l lang, r client.SessionRef) string {
	if r.BudgetMax == 0 {
		return l.F("%d rounds, no limit", r.UsedRounds)
	}
	return l.F("%d/%d rounds", r.UsedRounds, r.BudgetMax)
}
