package mcptools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
)

// ---------------------------------------------------------------- schemas

type prop map[string]any

func str(desc string) prop { return prop{"type": "string", "description": desc} }
func integer(desc string) prop {
	return prop{"type": "integer", "description": desc}
}
func enum(desc string, values ...string) prop {
	return prop{"type": "string", "enum": values, "description": desc}
}
func strList(desc string) prop {
	return prop{"type": "array", "items": prop{"type": "string"}, "description": desc}
}

// object builds an input schema of type object.
func object(props map[string]prop, required ...string) map[string]any {
	p := map[string]any{}
	for k, v := range props {
		p[k] = map[string]any(v)
	}
	s := map[string]any{"type": "object", "properties": p}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// ------------------------------------------------------------ registration

// registerAll registers every tool. The order here is the order of the
// documentation in docs/TOOLS.md.
func (s *Server) registerAll() {
	s.add("read_inbox",
		"Read your AgentMail inbox. Lists mails newest first with sender, To, Cc, date, session, subject, attachments (with attachment_id) and body. "+
			"With status=unread (the default) exactly the listed mails are marked read; status=all never marks anything.",
		object(map[string]prop{
			"status": enum("unread (default), read or all", "unread", "read", "all"),
			"limit":  integer("how many mails at most, 1 to 50 (default 5)"),
		}),
		s.readInbox)
	s.add("read_mail",
		"Read one mail in full by its mail_id (marks it read if it was sent to you).",
		object(map[string]prop{"mail_id": str("the mail's id")}, "mail_id"),
		s.readMail)
	s.add("read_thread",
		"Read the whole thread (session) a mail belongs to, oldest first.",
		object(map[string]prop{"mail_id": str("any mail of the thread")}, "mail_id"),
		s.readThread)
	s.add("send_mail",
		"Send a mail. Addresses are name@path.session: name@path goes to that agent's default session in that directory, "+
			"name@path.new starts a new session, name@path.<alias> continues an existing session (never retried as .new), a bare name is a person. "+
			"To answer a mail set reply_to to its mail_id (to and subject then default to the sender and \"Re: <subject>\"). "+
			"Each mail you send in a session uses one round of its budget.",
		object(map[string]prop{
			"to":             str("recipient address; optional when reply_to is set (defaults to the replied mail's sender)"),
			"cc":             str("more recipients, separated by commas"),
			"subject":        str("subject; optional when reply_to is set"),
			"body":           str("the message, Markdown"),
			"reply_to":       str("mail_id of the mail you answer"),
			"attachment_ids": strList("attachment ids from upload_attachment or from a received mail"),
		}, "body"),
		s.sendMail)
	s.add("forward_mail",
		"Forward a mail to someone else: a new thread with full addressing, quoting the original; body is your note.",
		object(map[string]prop{
			"mail_id": str("the mail to forward"),
			"to":      str("recipient address"),
			"cc":      str("more recipients, separated by commas"),
			"subject": str("subject (default \"Fwd: <original subject>\")"),
			"body":    str("your note above the quoted mail"),
		}, "mail_id", "to"),
		s.forwardMail)
	s.add("upload_attachment",
		"Upload a local file as an attachment and get its attachment_id for send_mail. Relative paths are in the session's directory.",
		object(map[string]prop{
			"path":     str("the file to upload"),
			"filename": str("the name recipients see (default: the file's name)"),
		}, "path"),
		s.uploadAttachment)
	s.add("download_attachment",
		"Save an attachment to a local file. Without path it goes into the session's directory under its own name; "+
			"path may be a file or an existing directory.",
		object(map[string]prop{
			"attachment_id": str("from read_inbox or read_mail"),
			"path":          str("where to save it (optional)"),
		}, "attachment_id"),
		s.downloadAttachment)
	s.add("suggest_address",
		"Find addresses (people, agents, directories, session aliases) matching a text, most recent first.",
		object(map[string]prop{
			"query": str("part of a name, directory or alias"),
			"limit": integer("how many at most (default 10)"),
		}, "query"),
		s.suggestAddress)
	s.add("list_contacts",
		"List the people and agents you can write to, with their status.",
		object(nil),
		s.listContacts)
	s.add("session_participants",
		"List who takes part in a session (default: the current one).",
		object(map[string]prop{"session_id": str("the session (default: the current session)")}),
		s.sessionParticipants)
	s.add("connect_to_server",
		"Connect this agent to an AgentMail gateway: register the agent with its key. Needed once for a new setup; the key must be registered by an admin.",
		object(map[string]prop{
			"gateway_url": str("gateway address (default: the configured one)"),
			"agent_name":  str("this agent's name (default: the configured one)"),
			"agent_key":   str("the agent key (default: the configured key or ~/.agentmail/agent.key; generated when there is none)"),
			"platform":    str("platform name, e.g. claude, opencode, pi"),
			"workspace":   str("directory this agent works in (default: the session's directory)"),
		}),
		s.connectToServer)
	s.add("create_schedule",
		"Create a reminder: at event_time minus remind_before_minutes a reminder mail goes to the recipients. "+
			"event_time is RFC 3339 (2026-05-01T09:30:00+08:00, recommended), a local time without zone (2026-05-01 09:30), or a date alone (09:00 that day); "+
			"natural language like \"tomorrow\" is refused.",
		object(map[string]prop{
			"title":                 str("what the reminder is about"),
			"event_time":            str("when the event happens"),
			"body":                  str("details for the reminder mail"),
			"remind_before_minutes": integer("minutes before event_time to send the reminder (default 0)"),
			"recipients":            str("addresses separated by commas (default: you)"),
		}, "title", "event_time"),
		s.createSchedule)
	s.add("list_schedules",
		"List your reminders with their schedule_id.",
		object(nil),
		s.listSchedules)
	s.add("update_schedule",
		"Change a reminder. Only pass the fields you change: every field you pass replaces the stored one.",
		object(map[string]prop{
			"schedule_id":           str("from list_schedules"),
			"title":                 str("new title"),
			"event_time":            str("new event time (same formats as create_schedule)"),
			"body":                  str("new details"),
			"remind_before_minutes": integer("new lead time in minutes"),
			"recipients":            str("new recipients, separated by commas"),
		}, "schedule_id"),
		s.updateSchedule)
	s.add("delete_schedule",
		"Delete a reminder.",
		object(map[string]prop{"schedule_id": str("from list_schedules")}, "schedule_id"),
		s.deleteSchedule)
	s.add("run_command",
		"Run a shell command (bash -c) on this machine, by default in the session's directory. Returns the exit code, stdout and stderr "+
			"(each cut after 16000 characters). Depending on the permission tier it is refused, runs at once, or first asks the person by mail and waits for the decision.",
		object(map[string]prop{
			"command":         str("the bash command line"),
			"cwd":             str("working directory (default: the session's directory)"),
			"timeout_seconds": integer("kill the command after this many seconds (default 600)"),
		}, "command"),
		s.runCommand)
	s.add("write_file",
		"Write a file on this machine (replaces it; parent directories are created). Relative paths are in the session's directory. "+
			"Protected locations are refused. Depending on the permission tier it is refused, runs at once, or first asks the person by mail.",
		object(map[string]prop{
			"path":    str("the file to write"),
			"content": str("the complete new content"),
		}, "path", "content"),
		s.writeFile)
}

// ------------------------------------------------------------------- mail

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
	limit, err := a.integer("limit", 5)
	if err != nil {
		return "", err
	}
	if limit < 1 || limit > 50 {
		return "", badArg("limit must be between 1 and 50, got %d", limit)
	}
	// T-1.3: exactly the listed mails are marked read, and nothing when
	// status=all.
	mark := status != "all"
	list, err := s.gateway().Inbox(ctx, client.InboxQuery{Status: status, Limit: limit, MarkRead: &mark})
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
	res, err := s.gateway().SendMail(ctx, client.SendMailRequest{
		To:            to,
		Cc:            normalizeRecipients(cc),
		Subject:       subject,
		Body:          body,
		ReplyTo:       replyTo,
		AttachmentIDs: ids,
	})
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

// ------------------------------------------------------------ attachments

// checkPath resolves p against the workspace and turns a protected hit
// into a refusal made before anything else happens; an unresolvable path
// is a bad argument.
func (s *Server) checkPath(p string) (string, error) {
	r, err := s.protected.Check(s.cfg.Workspace, p)
	if err != nil {
		if r != "" {
			return "", &Refusal{Reason: err.Error()}
		}
		return "", badArg("path %q: %v", p, err)
	}
	return r, nil
}

func (s *Server) uploadAttachment(ctx context.Context, a args) (string, error) {
	p, err := a.required("path", "the local file to upload")
	if err != nil {
		return "", err
	}
	// Key files and the gateway's data must not leave the machine either.
	r, err := s.checkPath(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", badArg("path %q: %v", p, err)
	}
	if !fi.Mode().IsRegular() {
		return "", badArg("path %q is not a regular file", p)
	}
	name, err := a.str("filename")
	if err != nil {
		return "", err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name = filepath.Base(r)
	}
	f, err := os.Open(r)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", r, err)
	}
	defer f.Close()
	att, err := s.gateway().UploadAttachment(ctx, name, f)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Uploaded %s (%s): attachment_id %s. Pass it in send_mail's attachment_ids.\n", att.Filename, FormatSize(att.Size), att.AttachmentID), nil
}

// safeFilename turns an attachment's declared name into a plain file name.
func safeFilename(name, id string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." || name == "/" {
		return "attachment-" + id
	}
	return name
}

// freeName returns dir/name, or dir/"name (2).ext" and so on when taken.
func freeName(dir, name string) string {
	p := filepath.Join(dir, name)
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return p
	}
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 2; ; i++ {
		p = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", stem, i, ext))
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
	}
}

func (s *Server) downloadAttachment(ctx context.Context, a args) (string, error) {
	id, err := a.required("attachment_id", "the id shown by read_inbox or read_mail")
	if err != nil {
		return "", err
	}
	p, err := a.str("path")
	if err != nil {
		return "", err
	}
	p = strings.TrimSpace(p)
	dir, target := s.cfg.Workspace, ""
	if p != "" {
		// Refuse a protected target before anything is fetched.
		r, err := s.checkPath(p)
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			dir = r
		} else {
			target = r
		}
	}
	body, meta, err := s.gateway().DownloadAttachment(ctx, id)
	if err != nil {
		return "", err
	}
	defer body.Close()
	if target == "" {
		target = freeName(dir, safeFilename(meta.Filename, id))
	}
	// Check the final name too (the directory case, and a name that
	// resolves through a link).
	r, err := s.checkPath(target)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(r), 0o755); err != nil {
		return "", fmt.Errorf("create the directory for %s: %w", r, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(r), ".agentmail-download-*")
	if err != nil {
		return "", fmt.Errorf("create a file next to %s: %w", r, err)
	}
	n, err := io.Copy(tmp, body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), r)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("save attachment %s to %s: %w", id, r, err)
	}
	return fmt.Sprintf("Saved attachment %s (%s) to %s\n", id, FormatSize(n), r), nil
}

// -------------------------------------------------------------- discovery

func (s *Server) suggestAddress(ctx context.Context, a args) (string, error) {
	q, err := a.required("query", "part of a name, directory or alias")
	if err != nil {
		return "", err
	}
	limit, err := a.integer("limit", 10)
	if err != nil {
		return "", err
	}
	if limit < 1 || limit > 50 {
		return "", badArg("limit must be between 1 and 50, got %d", limit)
	}
	l, err := s.gateway().Suggest(ctx, q, limit)
	if err != nil {
		return "", err
	}
	return RenderSuggestions(q, l), nil
}

func (s *Server) listContacts(ctx context.Context, _ args) (string, error) {
	l, err := s.gateway().Contacts(ctx)
	if err != nil {
		return "", err
	}
	return RenderContacts(l), nil
}

func (s *Server) sessionParticipants(ctx context.Context, a args) (string, error) {
	id, err := a.str("session_id")
	if err != nil {
		return "", err
	}
	id = strings.TrimSpace(id)
	if id == "" {
		id = s.cfg.SessionID
	}
	if id == "" {
		return "", badArg("session_id is required: this tool server has no current session (AGENTMAIL_SESSION_ID is empty)")
	}
	l, err := s.gateway().Participants(ctx, id)
	if err != nil {
		return "", err
	}
	return RenderParticipants(l), nil
}

// connectToServer registers the agent (T-6) and, on success, switches this
// tool server to that gateway and key. A key that is neither given nor
// configured is generated and saved with mode 0600 to the key file (never
// overwriting one); only its file path and first characters are shown.
func (s *Server) connectToServer(ctx context.Context, a args) (string, error) {
	v, err := a.strs("gateway_url", "agent_name", "agent_key", "platform", "workspace")
	if err != nil {
		return "", err
	}
	url, name, key, platform, ws := v[0], v[1], v[2], v[3], v[4]
	url, name, key, platform, ws = strings.TrimSpace(url), strings.TrimSpace(name), strings.TrimSpace(key), strings.TrimSpace(platform), strings.TrimSpace(ws)
	if s.cfg.TurnToken != "" && key == "" {
		// Under a bridge the tools hold only this turn's token; the agent
		// key, its file and the registration stay with the bridge.
		return "", errors.New("this tool server works for the current turn only (AGENTMAIL_TURN_TOKEN): the bridge is already connected and keeps the agent key; use the other tools, which act in this turn's session")
	}
	if url == "" {
		url = s.cfg.GatewayURL
	}
	if name == "" {
		name = s.cfg.AgentName
	}
	if platform == "" {
		platform = s.cfg.Platform
	}
	if ws == "" {
		ws = s.cfg.Workspace
	}
	var note string
	if key == "" {
		key = s.cfg.AgentKey
	}
	if key == "" {
		key, note, err = s.generateKey()
		if err != nil {
			return "", err
		}
	}
	gw := s.connect(url, key)
	agent, err := gw.Register(ctx, client.RegisterRequest{
		Name:       name,
		Platform:   platform,
		Workspaces: []client.Workspace{{Name: filepath.Base(ws), Path: ws}},
	})
	if err != nil {
		if client.StatusOf(err) == 401 {
			return "", fmt.Errorf("the gateway at %s does not know this agent key (starting %q)%s: an admin registers it with POST /api/v1/admin/agent-keys {\"agent_name\": %q, \"key_token\": <the key>}, then call connect_to_server again (%v)",
				url, keyPrefix(key), note, name, err)
		}
		return "", err
	}
	s.setGateway(gw)
	s.log.Info("connected to gateway", "gateway", url, "agent", agent.Name)
	return fmt.Sprintf("Connected to %s as agent %s (platform %s, status %s).%s\n", url, agent.Name, agent.Platform, agent.Status, note), nil
}

func keyPrefix(k string) string {
	if len(k) > 6 {
		return k[:6]
	}
	return k
}

func (s *Server) generateKey() (key, note string, err error) {
	path := s.cfg.AgentKeyFile
	if path == "" {
		return "", "", errors.New("no agent key configured and no key file path known: pass agent_key or set AGENTMAIL_AGENT_KEY")
	}
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), "", nil
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	key = "am_" + hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("save the new key to %s: %w", path, err)
	}
	_, err = f.WriteString(key + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", "", fmt.Errorf("save the new key to %s: %w", path, err)
	}
	return key, fmt.Sprintf(" A new agent key was generated and saved to %s (mode 0600)", path), nil
}

// -------------------------------------------------------------- schedules

func (s *Server) createSchedule(ctx context.Context, a args) (string, error) {
	title, err := a.required("title", "what the reminder is about")
	if err != nil {
		return "", err
	}
	when, err := a.required("event_time", "RFC 3339 like 2026-05-01T09:30:00+08:00, or 2026-05-01 09:30, or 2026-05-01")
	if err != nil {
		return "", err
	}
	body, err := a.str("body")
	if err != nil {
		return "", err
	}
	req := client.CreateScheduleRequest{Title: title, EventTime: when, Body: body}
	if a.has("remind_before_minutes") {
		n, err := a.integer("remind_before_minutes", 0)
		if err != nil {
			return "", err
		}
		req.RemindBeforeMinutes = n
	}
	rcpt, err := a.str("recipients")
	if err != nil {
		return "", err
	}
	req.Recipients = normalizeRecipients(rcpt)
	sc, err := s.gateway().CreateSchedule(ctx, req)
	if err != nil {
		return "", err
	}
	return "Created:\n" + RenderSchedule(*sc), nil
}

func (s *Server) listSchedules(ctx context.Context, _ args) (string, error) {
	l, err := s.gateway().ListSchedules(ctx)
	if err != nil {
		return "", err
	}
	return RenderSchedules(l), nil
}

func (s *Server) updateSchedule(ctx context.Context, a args) (string, error) {
	id, err := a.required("schedule_id", "the id from list_schedules")
	if err != nil {
		return "", err
	}
	var req client.UpdateScheduleRequest
	changed := 0
	for _, f := range []struct {
		name string
		dst  **string
		norm func(string) string
	}{
		{"title", &req.Title, strings.TrimSpace},
		{"event_time", &req.EventTime, strings.TrimSpace},
		{"body", &req.Body, nil},
		{"recipients", &req.Recipients, normalizeRecipients},
	} {
		if !a.has(f.name) {
			continue
		}
		v, err := a.str(f.name)
		if err != nil {
			return "", err
		}
		if f.norm != nil {
			v = f.norm(v)
		}
		*f.dst = &v
		changed++
	}
	if a.has("remind_before_minutes") {
		n, err := a.integer("remind_before_minutes", 0)
		if err != nil {
			return "", err
		}
		req.RemindBeforeMinutes = n
		changed++
	}
	if changed == 0 {
		return "", badArg("nothing to change: pass at least one of title, event_time, body, remind_before_minutes, recipients")
	}
	sc, err := s.gateway().UpdateSchedule(ctx, id, req)
	if err != nil {
		return "", err
	}
	return "Updated:\n" + RenderSchedule(*sc), nil
}

func (s *Server) deleteSchedule(ctx context.Context, a args) (string, error) {
	id, err := a.required("schedule_id", "the id from list_schedules")
	if err != nil {
		return "", err
	}
	if err := s.gateway().DeleteSchedule(ctx, id); err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleted schedule %s.\n", id), nil
}

// ------------------------------------------------------- execution gate

// runCommand is the gated shell (seed 003 section 2). Order: arguments,
// protected working directory (refused before asking anyone), the gate,
// then bash.
func (s *Server) runCommand(ctx context.Context, a args) (string, error) {
	command, err := a.str("command")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(command) == "" {
		return "", badArg("command is required: the bash command line to run")
	}
	secs, err := a.integer("timeout_seconds", int(DefaultCommandTimeout/time.Second))
	if err != nil {
		return "", err
	}
	if secs < 1 || secs > 24*3600 {
		return "", badArg("timeout_seconds must be between 1 and 86400, got %d", secs)
	}
	timeout := time.Duration(secs) * time.Second
	cwd, err := a.str("cwd")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(cwd) == "" {
		cwd = s.cfg.Workspace
	}
	dir, err := s.checkPath(cwd)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", badArg("cwd %q is not an existing directory", cwd)
	}
	input := map[string]any{"command": command, "cwd": dir}
	ok, err := s.gate.Authorize(ctx, GateRequest{
		Tool:     "run_command",
		Input:    input,
		Question: fmt.Sprintf("Allow this command to run in %s?", dir),
		Context:  fmt.Sprintf("Tool run_command (bash -c)\nDirectory: %s\nCommand:\n%s", dir, command),
	})
	if err != nil {
		return "", err
	}
	res, err := RunCommand(ctx, command, dir, timeout, s.sandbox)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Ran in %s (%s).\n%s", dir, ok.Via, res.Render(timeout)), nil
}

// writeFile is the gated file write (seed 003 section 2): protected paths
// are refused before asking anyone; after the approval the path is
// resolved again, so a link planted while waiting cannot redirect the
// write.
func (s *Server) writeFile(ctx context.Context, a args) (string, error) {
	p, err := a.required("path", "the file to write")
	if err != nil {
		return "", err
	}
	if !a.has("content") {
		return "", badArg("content is required: the complete new content of the file (it may be empty)")
	}
	content, err := a.str("content")
	if err != nil {
		return "", err
	}
	r, err := s.checkPath(p)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(r); err == nil && fi.IsDir() {
		return "", badArg("path %q is a directory; give a file path", p)
	}
	sum := sha256.Sum256([]byte(content))
	preview, cut := cutChars(content, 2000)
	ctxText := fmt.Sprintf("Tool write_file\nPath: %s\nBytes: %d\nContent:\n%s", r, len(content), preview)
	if cut > 0 {
		ctxText += fmt.Sprintf("\n[... %d more characters]", cut)
	}
	ok, err := s.gate.Authorize(ctx, GateRequest{
		Tool:     "write_file",
		Input:    map[string]any{"path": r, "bytes": len(content), "sha256": hex.EncodeToString(sum[:])},
		Question: fmt.Sprintf("Allow writing %d bytes to %s?", len(content), r),
		Context:  ctxText,
	})
	if err != nil {
		return "", err
	}
	again, err := s.checkPath(p)
	if err != nil {
		return "", err
	}
	if again != r {
		return "", &Refusal{Reason: fmt.Sprintf("%s now resolves to %s instead of the approved %s: nothing was written", p, again, r), Asked: true}
	}
	n, err := WriteFile(r, []byte(content))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Wrote %d bytes to %s (%s).\n", n, r, ok.Via), nil
}
