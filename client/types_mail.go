package client

import "time"

// Mail types.
const (
	MailTypeNormal             = "normal"
	MailTypePermissionRequest  = "permission_request"
	MailTypePermissionDecision = "permission_decision"
	MailTypeFailureReport      = "failure_report"
	MailTypeReminder           = "reminder"
)

// Relay kinds (W-5): the only legal non-empty values of SendMailRequest.Relay.
const (
	RelaySummary    = "summary"
	RelayPermission = "permission"
)

// SendMailRequest is the body of POST /api/v1/mail/send (agents, W-5) and
// POST /api/v1/me/mail/send (people, who may also set RoundBudget).
//
// To is one address `name@path.session` or a bare person name. Cc is a list
// separated by comma, semicolon, whitespace or a full-width comma.
// SessionAlias only applies when a new session is created. Relay is "" or
// "summary" ("permission" is stored only by POST /api/v1/permission/request;
// a send with it is a 400); RelayKey is required when Relay is set (W-5.1)
// and a replay answers {"status":"duplicate_relay"} (W-5.2). A summary relay
// must have ReplyTo set to a mail the sender received, and reaches only that
// mail's sender and its session's participants.
type SendMailRequest struct {
	To            string   `json:"to"`
	Cc            string   `json:"cc,omitempty"`
	Subject       string   `json:"subject" in:"optional"`
	Body          string   `json:"body" in:"optional"` // Markdown
	ReplyTo       string   `json:"reply_to,omitempty"`
	SessionAlias  string   `json:"session_alias,omitempty" bounds:"maxLength=200"`
	AttachmentIDs []string `json:"attachment_ids,omitempty"`
	Relay         string   `json:"relay,omitempty"`
	RelayKey      string   `json:"relay_key,omitempty"`
	MailType      string   `json:"mail_type,omitempty"`    // agents: "" | "normal" | "failure_report"
	RoundBudget   *int     `json:"round_budget,omitempty"` // people only; 0 = unlimited; only for a mail that opens a session (else 400)
	// Importance is low, normal (""), high or urgent (types_coordination.go).
	Importance string `json:"importance,omitempty" enum:"low,normal,high,urgent"`
	// AckRequired asks every recipient to acknowledge the mail within
	// AckWithinMinutes (1 to 43200; 0 is 1440, 24 hours); it never widens
	// who may be written to.
	AckRequired      bool `json:"ack_required,omitempty"`
	AckWithinMinutes int  `json:"ack_within_minutes,omitempty" bounds:"minimum=0,maximum=43200"`
	// Translations are the mail in the readers' languages (issue 18): when
	// every recipient is a person and they share a language given here,
	// that translation's subject (when not empty) and body are stored
	// instead of Subject and Body, which agents read. Bridges send failure
	// reports this way. At most one each for "en" and "zh".
	Translations []MailTranslation `json:"translations,omitempty"`
}

// MailTranslation is one language's form of a mail: Language "en" or
// "zh", Subject and Body under the limits of a mail's own.
type MailTranslation struct {
	Language string `json:"language" enum:"en,zh"`
	Subject  string `json:"subject"`
	Body     string `json:"body"`
}

// SendMailResponse answers a send or forward (W-5). Status is "sent", or
// "duplicate_relay" when the relay_key was seen before (then nothing was
// stored and MailID names the original mail). BudgetMax 0 means unlimited.
type SendMailResponse struct {
	Status          string `json:"status"`
	MailID          string `json:"mail_id"`
	SessionID       string `json:"session_id"`
	SessionAlias    string `json:"session_alias"`
	NewSession      bool   `json:"new_session"`
	BudgetRemaining int    `json:"budget_remaining"`
	BudgetMax       int    `json:"budget_max"`
}

// ForwardRequest is the body of POST /api/v1/mail/{id}/forward and
// /api/v1/me/mail/{id}/forward (T-5): a new thread to To with full
// addressing, quoting the original; Body is the forwarder's note.
type ForwardRequest struct {
	To      string `json:"to"`
	Cc      string `json:"cc,omitempty"`
	Subject string `json:"subject,omitempty"` // default "Fwd: <original subject>"
	Body    string `json:"body,omitempty"`
	// AttachmentIDs adds the forwarder's own attachments; the original's
	// attachments always travel with the forward.
	AttachmentIDs []string `json:"attachment_ids,omitempty"`
}

// Recipient is one addressee of a mail.
type Recipient struct {
	Name      string `json:"name"`
	Kind      string `json:"kind" enum:"agent,person"`
	Role      string `json:"role" enum:"to,cc"`
	Address   string `json:"address"`
	Workspace string `json:"workspace,omitempty"`
}

// Attachment describes a stored attachment (W-8).
type Attachment struct {
	AttachmentID string    `json:"attachment_id"`
	Filename     string    `json:"filename"`
	Size         int64     `json:"size"` // bytes
	SHA256       string    `json:"sha256"`
	ContentType  string    `json:"content_type"` // as declared by the uploader; downloads are always octet-stream
	CreatedAt    time.Time `json:"created_at"`
}

// Mail is one stored mail as its viewer sees it. Read and Role are the
// viewer's own state; they are empty for the sender.
type Mail struct {
	MailID       string       `json:"mail_id"`
	SessionID    string       `json:"session_id"`
	SessionAlias string       `json:"session_alias"`
	ParentMailID string       `json:"parent_mail_id,omitempty"`
	FromName     string       `json:"from_name"`
	FromKind     string       `json:"from_kind" enum:"agent,person,system"`
	FromAddress  string       `json:"from_address"`
	Recipients   []Recipient  `json:"recipients"`
	Subject      string       `json:"subject"`
	Body         string       `json:"body"`
	MailType     string       `json:"mail_type" enum:"normal,permission_request,permission_decision,failure_report,reminder"`
	Relay        string       `json:"relay,omitempty"`
	Attachments  []Attachment `json:"attachments"`
	CreatedAt    time.Time    `json:"created_at"`
	Read         bool         `json:"read"`
	Role         string       `json:"role,omitempty" enum:"to,cc"` // for a recipient viewer
	Permission   *Permission  `json:"permission,omitempty"`        // for permission_request mails
	Importance   string       `json:"importance" enum:"low,normal,high,urgent"`
	// For a mail sent with ack_required: when acknowledgements become
	// overdue, the viewer's own acknowledgement (a recipient viewer), and
	// every recipient's state.
	AckRequired bool       `json:"ack_required"`
	AckDueAt    *time.Time `json:"ack_due_at,omitempty"`
	AckedAt     *time.Time `json:"acked_at,omitempty"`
	Acks        []MailAck  `json:"acks,omitempty"`
}

// MailList answers inbox, sent, search, thread and session mail listings.
// Unread is the number of unread mails the viewer has in all (not only the
// listed ones). NextCursor, set when the page was full, continues the
// listing in its own order: older mails for the newest-first listings
// (inbox, sent, search), newer mails for a session's mails (oldest first).
type MailList struct {
	Mails      []Mail `json:"mails"`
	Unread     int    `json:"unread"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// MarkReadRequest is the body of POST /api/v1/mail/read and
// /api/v1/me/mail/read. Unread true marks them unread instead.
type MarkReadRequest struct {
	MailIDs []string `json:"mail_ids"`
	Unread  bool     `json:"unread,omitempty"`
}

// MarkReadResponse answers a MarkReadRequest.
type MarkReadResponse struct {
	Marked int `json:"marked"`
}

// TreeNode is one mail in a conversation tree (parent_mail_id links, across
// sessions through forwards), without the body.
type TreeNode struct {
	MailID       string    `json:"mail_id"`
	ParentMailID string    `json:"parent_mail_id,omitempty"`
	SessionID    string    `json:"session_id"`
	SessionAlias string    `json:"session_alias"`
	FromName     string    `json:"from_name"`
	Subject      string    `json:"subject"`
	Snippet      string    `json:"snippet"` // first 140 characters of the body
	MailType     string    `json:"mail_type" enum:"normal,permission_request,permission_decision,failure_report,reminder"`
	Depth        int       `json:"depth"` // 0 = root
	CreatedAt    time.Time `json:"created_at"`
}

// Tree answers GET /api/v1/me/mail/{id}/tree?before=N&after=N&cursor=...
// Nodes are in conversation order (depth-first by time). HasBefore/HasAfter
// tell whether more nodes exist; BeforeCursor/AfterCursor load them.
type Tree struct {
	RootID       string     `json:"root_id"`
	FocusID      string     `json:"focus_id"`
	Nodes        []TreeNode `json:"nodes"`
	HasBefore    bool       `json:"has_before"`
	HasAfter     bool       `json:"has_after"`
	BeforeCursor string     `json:"before_cursor,omitempty"`
	AfterCursor  string     `json:"after_cursor,omitempty"`
	Total        int        `json:"total"`
}
