package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// The relay rules (issue 12, "bounded free channels"; docs/API.md
// "Limits"). A relay mail is free: it uses no round of the session budget
// (I-2). So that the free channel stays bounded, every relay answers one
// received mail (reply_to), lands in that mail's session, and takes one
// answer slot of that mail; each slot holds at most one relay mail per
// receiving agent:
//
//   - RelaySlotAnswer: (a) the summary of the turn that answered the
//     received mail, into its session. A delegation relay (b: a received
//     mail of a delegated session answered into its origin session,
//     isDelegationRelay) and a stop
//     notice (the summary of a turn that was stopped) take this same slot
//     when they exist, instead of the summary.
//   - RelaySlotFailure: (d) the failure report of the received mail
//     (mail_type failure_report, relay_key "model-failure:<mail_id>"),
//     besides the answer.
//
// Free means free only towards people: a summary relay (the answer slot)
// that answers a mail whose sender is an agent uses one round of the
// session budget like an ordinary send (403 budget_exhausted at the
// limit), so two agents answering each other's mails with summaries stop
// when the budget is spent. A summary answering a person's mail (or the
// gateway's own, sender kind system) stays free, and so does every
// failure report: it answers one received mail and nothing answers it.
//
// The slots are a unique constraint in the database (relay_answers), not
// a count in memory, so replicas and restarts keep them. The same
// relay_key sent again stays idempotent (status duplicate_relay, the
// first mail); a second distinct relay for a taken slot is a 409
// relay_already_answered naming the mail that holds it.
const (
	RelaySlotAnswer  = "answer"
	RelaySlotFailure = "failure"
)

// relaySlot answers the slot a relay send takes. Relay kinds to come
// (delegation relay, stop notice) add their case here.
func relaySlot(spec *sendSpec) string {
	if spec.mailType == client.MailTypeFailureReport {
		return RelaySlotFailure
	}
	return RelaySlotAnswer
}

// relayUsesRound reports whether a relay send is charged to the session
// budget like an ordinary mail: a summary relay (answer slot) whose
// replied mail was sent by an agent. Failure reports, delegation relays
// (towards the origin's people) and summaries that answer a person (or
// the system sender) use no round.
func relayUsesRound(spec *sendSpec, parent *store.ViewedMail) bool {
	return spec.relay == client.RelaySummary && relaySlot(spec) == RelaySlotAnswer && !spec.delegation &&
		parent != nil && parent.FromKind == store.KindAgent
}

// claimRelaySlot takes the relay's slot of the received mail it answers,
// inside the sending transaction and after the relay_key was claimed (so a
// replayed key answers duplicate_relay first). A slot held by another relay
// mail is a 409 relay_already_answered; the transaction then stores
// nothing.
func claimRelaySlot(ctx context.Context, tx *Tx, agent string, spec *sendSpec, answers, mailID string) error {
	slot := relaySlot(spec)
	ok, err := tx.ClaimRelayAnswer(ctx, store.RelayAnswerRow{AgentName: agent, AnswersMail: answers, Slot: slot,
		RelayKey: spec.relayKey, MailID: mailID, CreatedAt: tx.Now})
	if err != nil || ok {
		return err
	}
	held := ""
	if r, err := tx.RelayAnswer(ctx, agent, answers, slot); err == nil {
		held = fmt.Sprintf(" (mail %s, relay_key %q)", r.MailID, r.RelayKey)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	what, rule := "a summary", "one summary"
	if slot == RelaySlotFailure {
		what, rule = "a failure report", "one failure report"
	}
	return Conflict("relay_already_answered",
		fmt.Sprintf("mail %s already has %s from %s%s; a free relay answers each received mail with at most %s",
			answers, what, agent, held, rule),
		"send the same relay_key again to get that mail back, or send a normal mail (it uses a round of the session budget)")
}

// isDelegationRelay is rule (b): a summary relay from p answering a mail
// p received (parent) in a delegated session, addressed to that session's
// origin (other), whose agent p is. It lands in the origin session, to its
// people or, at a deeper level of a chain, to the agent that delegated the
// origin (checkDelegationRecipients), takes the answer slot of the received
// mail (so at most one per received mail, 409 relay_already_answered for
// a second) and uses no round (I-2): relays only travel up a chain that
// is at most Config.DelegationDepth deep, one per received mail. Nothing
// is relayed into the delegated session itself.
func isDelegationRelay(ctx context.Context, q *store.Q, p *Principal, spec *sendSpec, parent *store.ViewedMail, other store.SessionRow) (bool, error) {
	if spec.relay != client.RelaySummary || spec.mailType != client.MailTypeNormal || other.AgentName != p.Name {
		return false, nil
	}
	sess, err := q.GetSession(ctx, parent.SessionID)
	if err != nil {
		return false, err
	}
	return sess.OriginSessionID != "" && sess.OriginSessionID == other.SessionID, nil
}

// checkDelegationRecipients keeps a delegation relay going up the chain
// only: each recipient must be a person, or, when the origin session is
// itself delegated (person -> A -> B -> C: B relays C's answer into the
// session A opened), the agent that delegated it (the agent of the
// origin's own origin), whose turn then relays into its own origin in
// turn. Anyone else is a 400 relay_recipient naming the field, so no agent
// is answered automatically outside its own delegation.
func checkDelegationRecipients(ctx context.Context, q *store.Q, origin store.SessionRow, targets []target) error {
	delegator := ""
	if origin.OriginSessionID != "" {
		up, err := q.GetSession(ctx, origin.OriginSessionID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		delegator = up.AgentName
	}
	for _, t := range targets {
		if t.kind == store.KindPerson || (delegator != "" && t.kind == store.KindAgent && t.addr.Name == delegator) {
			continue
		}
		return InvalidCode("relay_recipient", t.role,
			fmt.Sprintf("%s is an agent; a delegation relay into session %q reaches its people, or the agent that delegated it", t.addr.Name, origin.Alias),
			"address the person of the origin session (or the agent that opened it by delegation), or send a normal mail (it uses a round)")
	}
	return nil
}
