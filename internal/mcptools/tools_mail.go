package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/client"
)

func (s *Server) readInbox(ctx context.Context, a args) (string, error) {
	status, err := a.str("status")
	if err != nil {
		return "", err
	}
	status = strings.ToLower(strings.TrimSpace(status))
	if status == "" {
		status = "unread"
	}
	if status != "unread" && status != "read" && status != "all" {
		return "", badArg("status must be unread, read or all, got %q", status)
	}
	limit, err := a.bounded("limit", inboxLimitDefault, 1, inboxLimitMax)
	if err != nil {
		return "", err
	}
	// T-1.3: exactly the listed mails are marked read, and nothing when
	// status=all.
	mark := status != "all"
	v, err := a.strs("importance", "sort")
	if err != nil {
		return "", err
	}
	list, err := s.gateway().Inbox(ctx, client.InboxQuery{Status: status, Limit: limit, MarkRead: &mark,
		Importance: strings.TrimSpace(v[0]), Sort: strings.TrimSpace(v[1])})
	if err != nil {
		return "", err
	}
	return RenderInbox(list, status, limit), nil
}

func (s *Server) readMail(ctx context.Context, a args) (string, error) {
	id, err := a.required("mail_id", "the id of the mail to read (from read_inbox)")
	if err != nil {
		return "", err
	}
	m, err := s.gateway().GetMail(ctx, id)
	if err != nil {
		return "", err
	}
	text := RenderMail(*m, 0)
	if m.Role != "" && !m.Read {
		if _, err := s.gateway().MarkRead(ctx, client.MarkReadRequest{MailIDs: []string{m.MailID}}); err != nil {
			text += fmt.Sprintf("(could not mark it read: %v)\n", err)
		}
	}
	return text, nil
}

func (s *Server) readThread(ctx context.Context, a args) (string, error) {
	id, err := a.required("mail_id", "the id of any mail of the thread")
	if err != nil {
		return "", err
	}
	list, err := s.gateway().Thread(ctx, id)
	if err != nil {
		return "", err
	}
	return RenderThread(list), nil
}

// sendMail sends the model's own mail. It never sets relay or relay_key
// (N-5, W-5.3: the relay channel is the bridge's alone) and records
// nothing locally: the bridge learns of explicit sends from the gateway.
func (s *Server) sendMail(ctx context.Context, a args) (string, error) {
	v, err := a.strs("to", "cc", "subject", "body", "reply_to")
	if err != nil {
		return "", err
	}
	to, cc, subject, body, replyTo := v[0], v[1], v[2], v[3], v[4]
	ids, err := a.list("attachment_ids")
	if err != nil {
		return "", err
	}
	to, replyTo, subject = strings.TrimSpace(to), strings.TrimSpace(replyTo), strings.TrimSpace(subject)
	if strings.TrimSpace(body) == "" {
		return "", badArg("body is required: write the message")
	}
	if replyTo != "" && (to == "" || subject == "") {
		orig, err := s.gateway().GetMail(ctx, replyTo)
		if err != nil {
			return "", fmt.Errorf("reply_to %s: %w", replyTo, err)
		}
		if to == "" {
			to = orig.FromAddress
			if to == "" {
				to = orig.FromName
			}
		}
		if subject == "" {
			subject = orig.Subject
			if !strings.HasPrefix(strings.ToLower(subject), "re:") {
				subject = "Re: " + subject
			}
		}
	}
	if to == "" {
		return "", badArg("to is required: give an address like name@path, name@path.new, name@path.<alias> or a person's name (or set reply_to)")
	}
	if subject == "" {
		return "", badArg("subject is required when not replying")
	}
	req := client.SendMailRequest{
		To:            to,
		Cc:            normalizeRecipients(cc),
		Subject:       subject,
		Body:          body,
		ReplyTo:       replyTo,
		AttachmentIDs: ids,
	}
	if err := mailOptions(a, &req); err != nil { // tools_acks.go
		return "", err
	}
	res, err := s.gateway().SendMail(ctx, req)
	if err != nil {
		return "", err
	}
	return RenderSent("Sent", res), nil
}

func (s *Server) forwardMail(ctx context.Context, a args) (string, error) {
	id, err := a.required("mail_id", "the id of the mail to forward")
	if err != nil {
		return "", err
	}
	to, err := a.required("to", "the address to forward to")
	if err != nil {
		return "", err
	}
	v, err := a.strs("cc", "subject", "body")
	if err != nil {
		return "", err
	}
	cc, subject, body := v[0], v[1], v[2]
	res, err := s.gateway().Forward(ctx, id, client.ForwardRequest{To: to, Cc: normalizeRecipients(cc), Subject: strings.TrimSpace(subject), Body: body})
	if err != nil {
		return "", err
	}
	return RenderSent("Forwarded", res), nil
}
