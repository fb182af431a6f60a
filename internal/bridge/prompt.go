package bridge

import (
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/internal/modeltext"
)

// PromptInput is what BuildPrompt needs about a mail.
type PromptInput struct {
	MailID       string
	From         string
	FromIsAgent  bool
	Subject      string
	ReplyAddress string
	SelfAddress  string
	Workspace    string
	// Importance is the mail's ("" or "normal": not mentioned); AckRequired
	// asks the model to acknowledge it (issue 21).
	Importance  string
	AckRequired bool
	// DelegatedAlias is the alias of the delegated session the mail
	// arrived in when it answers a delegation of this conversation
	// (delegation.go), else "".
	DelegatedAlias string
	// DelegatedOpener is who opened this conversation and receives the
	// turn's final message as the delegation relay: its person, or the
	// agent that delegated it at a deeper level of a chain; "" reads "the
	// person of this conversation".
	DelegatedOpener string
}

// BuildPrompt is the user message of a mail-driven turn (B-3.4, B-3.5):
// it gives the mail_id and tells the model to read the mail with
// read_inbox (or read_mail). For a person's mail it says the reply is sent
// automatically, so the model must not call send_mail to answer (B-3.4); for
// an agent's mail it says the opposite, because the bridge never answers an
// agent on its own. The reply address is included so the model never builds
// an address itself (W-4: a hand-made ".new" opens a new session).
//
// Every value that others wrote or named (sender, subject, addresses,
// aliases) is put on one line (modeltext.OneLine; the subject quoted), so a
// hostile subject cannot add lines that read as the bridge's own
// instructions.
func BuildPrompt(in PromptInput) string {
	in.From, in.ReplyAddress, in.SelfAddress = modeltext.OneLine(in.From), modeltext.OneLine(in.ReplyAddress), modeltext.OneLine(in.SelfAddress)
	in.Workspace, in.DelegatedAlias, in.DelegatedOpener = modeltext.OneLine(in.Workspace), modeltext.OneLine(in.DelegatedAlias), modeltext.OneLine(in.DelegatedOpener)
	in.MailID, in.Importance = modeltext.OneLine(in.MailID), modeltext.OneLine(in.Importance)
	var b strings.Builder
	fmt.Fprintf(&b, "You have new mail in AgentMail from %s", in.From)
	if in.Subject != "" {
		fmt.Fprintf(&b, ", subject %q", in.Subject)
	}
	fmt.Fprintf(&b, " (mail_id %s).\n", in.MailID)
	switch in.Importance {
	case "urgent":
		b.WriteString("The sender marked this mail URGENT: deal with it before anything else.\n")
	case "high":
		b.WriteString("The sender marked this mail as of high importance.\n")
	}
	if in.AckRequired {
		fmt.Fprintf(&b, "The sender asks for an acknowledgement: once you have read it and will act on it, call acknowledge_mail with mail_id %s.\n", in.MailID)
	}
	fmt.Fprintf(&b, "Read it first with the read_inbox tool (or read_mail with mail_id %s); the body and any attachments are only there.\n", in.MailID)
	if in.Workspace != "" {
		fmt.Fprintf(&b, "Your working directory is %s.\n", in.Workspace)
	}
	if in.DelegatedAlias != "" {
		fmt.Fprintf(&b, "This is %s's answer in session %q, which you opened from this conversation to delegate work to it. "+
			"Continue the work it was for. Your final message of this turn is sent automatically to %s. "+
			"To write to %s again, call send_mail", in.From, in.DelegatedAlias, delegationOpener(in.DelegatedOpener), in.From)
		if in.ReplyAddress != "" {
			fmt.Fprintf(&b, " to %s", in.ReplyAddress)
		}
		fmt.Fprintf(&b, " with reply_to %s.\n", in.MailID)
	} else if in.FromIsAgent {
		b.WriteString("The sender is another agent: nothing is sent back automatically. " +
			"When you have something to tell it, call send_mail")
		if in.ReplyAddress != "" {
			fmt.Fprintf(&b, " to %s", in.ReplyAddress)
		}
		fmt.Fprintf(&b, " with reply_to %s.\n", in.MailID)
	} else {
		b.WriteString("Do the work the mail asks for. Your final message of this turn is sent back to the sender automatically " +
			"as the reply: do not call send_mail to answer this mail.\n")
		if in.ReplyAddress != "" {
			fmt.Fprintf(&b, "Use send_mail only to write to someone else or to add people; to write into this conversation use the address %s with reply_to %s.\n",
				in.ReplyAddress, in.MailID)
		}
	}
	if in.SelfAddress != "" {
		fmt.Fprintf(&b, "Your own address in this conversation is %s.\n", in.SelfAddress)
	}
	return b.String()
}

// DecisionInput is what DecisionPrompt needs about a permission decision
// that arrived after its waiting ask was lost (B-4.2).
type DecisionInput struct {
	Approved  bool
	Decision  string
	Note      string
	DecidedBy string
	MailID    string // the permission request mail
}

// DecisionPrompt is the message delivered into the original platform
// session when a permission decision arrives and no ask waits for it any
// more (B-4.2: the bridge restarted and the platform's tool call was
// already refused). It tells the model the decision so it can retry. The
// decider's name is put on one line and the note quoted, so a note cannot
// add lines that read as the bridge's verdict.
func DecisionPrompt(in DecisionInput) string {
	in.DecidedBy, in.MailID = modeltext.OneLine(in.DecidedBy), modeltext.OneLine(in.MailID)
	var b strings.Builder
	verdict := "denied"
	if in.Approved {
		verdict = "approved"
	}
	fmt.Fprintf(&b, "A person (%s) has now %s your earlier permission request (mail_id %s) with the answer %q.\n",
		nonEmpty(in.DecidedBy, "a person"), verdict, in.MailID, in.Decision)
	if in.Note != "" {
		fmt.Fprintf(&b, "Their note: %q\n", in.Note)
	}
	b.WriteString("The tool call that asked was already refused while the bridge restarted. ")
	if in.Approved {
		b.WriteString("If the action is still needed, run it again now; you will be asked again if the platform requires it.\n")
	} else {
		b.WriteString("Do not run it; continue without it or explain what you need instead.\n")
	}
	return b.String()
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// delegationOpener names who receives a delegation relay in the prompt.
func delegationOpener(name string) string {
	if name == "" {
		return "the person of this conversation"
	}
	return name + ", who opened this conversation"
}
