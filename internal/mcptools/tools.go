package mcptools

import (
	"fmt"
	"time"
)

// prop is one property of a tool's JSON input schema; str, integer, enum
// and strList build the common ones. The tools' handlers live in
// tools_<group>.go, one file per group of registerAll.
type prop map[string]any

func str(desc string) prop { return prop{"type": "string", "description": desc} }
func enum(desc string, values ...string) prop {
	return prop{"type": "string", "enum": values, "description": desc}
}

// intIn is an integer property with the range lo..hi and default def the
// tool enforces (args.bounded), stated in the schema and the description.
func intIn(desc string, lo, hi, def int) prop {
	return prop{"type": "integer", "minimum": lo, "maximum": hi, "default": def,
		"description": fmt.Sprintf("%s, %d to %d (default %d)", desc, lo, hi, def)}
}

// Limits the tools state in their descriptions and schemas (issue 19 item
// 3). The gateway's own (internal/gateway MaxSubjectRunes, MaxBodyBytes,
// DefaultSuggestLimit, MaxSuggestLimit, MaxRemindBeforeMinutes,
// DefaultScheduleLimit) are mirrored here, since this package depends on
// the client alone; TestToolLimitsMatchTheGateway checks they are equal.
const (
	inboxLimitDefault, inboxLimitMax     = 5, 50
	suggestLimitDefault, suggestLimitMax = 10, 50
	maxSubjectRunes                      = 500
	maxBodyBytes                         = 1 << 20
	maxRemindBeforeMinutes               = 366 * 24 * 60
	defaultScheduleLimit                 = 50
	maxCommandSeconds                    = 24 * 3600
)

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

// registerAll registers every tool. The order here is the order of the
// documentation in docs/TOOLS.md.
func (s *Server) registerAll() {
	s.add("read_inbox",
		"Read your AgentMail inbox. Lists mails newest first with sender, To, Cc, date, session, subject, attachments (with attachment_id) and body. "+
			"With status=unread (the default) exactly the listed mails are marked read; status=all never marks anything.",
		object(map[string]prop{
			"status":     enum("unread (default), read or all", "unread", "read", "all"),
			"limit":      intIn("how many mails at most", 1, inboxLimitMax, inboxLimitDefault),
			"importance": str("only mails of these importance levels, comma-separated: low, normal, high, urgent"),
			"sort":       enum("date (default, newest first) or importance (most important first)", "date", "importance"),
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
			"Each mail you send in a session uses one round of its budget. "+
			fmt.Sprintf("The subject may have at most %d characters, the body at most %d bytes.", maxSubjectRunes, maxBodyBytes),
		object(withMailOptions(map[string]prop{ // tools_acks.go: importance, ack_required
			"to":             str("recipient address; optional when reply_to is set (defaults to the replied mail's sender)"),
			"cc":             str("more recipients, separated by commas"),
			"subject":        str("subject; optional when reply_to is set"),
			"body":           str("the message, Markdown"),
			"reply_to":       str("mail_id of the mail you answer"),
			"attachment_ids": strList("attachment ids from upload_attachment or from a received mail"),
		}), "body"),
		s.sendMail)
	s.add("forward_mail",
		"Forward a mail to someone else: a new thread with full addressing, quoting the original; body is your note. "+
			fmt.Sprintf("The subject may have at most %d characters, the body at most %d bytes.", maxSubjectRunes, maxBodyBytes),
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
			"limit": intIn("how many at most", 1, suggestLimitMax, suggestLimitDefault),
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
			"natural language like \"tomorrow\" is refused. "+
			fmt.Sprintf("The body may have at most %d bytes. The gateway keeps a limited number of reminders per owner (%d unless its operator set another; list_schedules shows the count and the limit).", maxBodyBytes, defaultScheduleLimit),
		object(map[string]prop{
			"title":                 str("what the reminder is about"),
			"event_time":            str("when the event happens"),
			"body":                  str("details for the reminder mail"),
			"remind_before_minutes": intIn("minutes before event_time to send the reminder", 0, maxRemindBeforeMinutes, 0),
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
			"schedule_id": str("from list_schedules"),
			"title":       str("new title"),
			"event_time":  str("new event time (same formats as create_schedule)"),
			"body":        str("new details"),
			"remind_before_minutes": prop{"type": "integer", "minimum": 0, "maximum": maxRemindBeforeMinutes,
				"description": fmt.Sprintf("new lead time in minutes, 0 to %d", maxRemindBeforeMinutes)},
			"recipients": str("new recipients, separated by commas"),
		}, "schedule_id"),
		s.updateSchedule)
	s.add("delete_schedule",
		"Delete a reminder.",
		object(map[string]prop{"schedule_id": str("from list_schedules")}, "schedule_id"),
		s.deleteSchedule)
	s.add("run_command",
		"Run a shell command (bash -c) on this machine, by default in the session's directory. Returns the exit code, stdout and stderr "+
			fmt.Sprintf("(each cut after %d characters). Depending on the permission tier it is refused, runs at once, or first asks the person by mail and waits for the decision.", MaxOutputChars),
		object(map[string]prop{
			"command":         str("the bash command line"),
			"cwd":             str("working directory (default: the session's directory)"),
			"timeout_seconds": intIn("kill the command after this many seconds", 1, maxCommandSeconds, int(DefaultCommandTimeout/time.Second)),
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
	s.registerReservationTools() // tools_reservations.go
	s.registerAckTools()         // tools_acks.go
	s.registerSearchTools()      // tools_search.go
}
