// Package emailchannel lets people take part from their own mail client
// (issue 20): a mail that reaches a person is also sent to their verified
// address, and a plain reply to it lands in the thread, deciding a
// permission request exactly as a reply on the web page does.
//
// Outbound: the outbox follows the gateway's event log with a durable
// cursor (outbox.go), so nothing in the send path waits for mail; each
// new_mail event for a person whose address is verified and whose
// preference covers the mail becomes one outbox row, unique per mail and
// person. A sender loop (sender.go) delivers the rows through the relay
// (github.com/emersion/go-smtp), retrying temporary failures with backoff
// and giving up on permanent ones with the relay's answer.
//
// Inbound: an SMTP listener (inbound.go) accepts mail only for
// r+<token>@MAIL_DOMAIN, from the verified address of the person the token
// was issued to, with a DKIM signature that verifies when there is one
// (github.com/emersion/go-msgauth). The new text of the reply (extract.go)
// is sent as that person with reply_to the notified mail, through
// gateway.Service.Send: the same code path and membership rules as a reply
// on the web page.
package emailchannel

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strings"
	"time"
)

// Notification preferences (PATCH /api/v1/me email_notify).
const (
	NotifyAll        = "all"        // every mail to the person
	NotifyPermission = "permission" // permission requests and failure reports (the default)
	NotifyNone       = "none"       // nothing
)

// Defaults of Config.
const (
	DefaultMaxMessageBytes = 35 << 20 // an inbound message: one 25 MB attachment, base64 encoded
	DefaultRepliesPerHour  = 60
	DefaultBytesPerDay     = 200 << 20
	DefaultRetryMin        = 10 * time.Second
	DefaultRetryMax        = 5 * time.Minute
	DefaultGiveUpAfter     = 48 * time.Hour
)

// Config is the email channel's configuration, read by `agentmail serve`
// from its flags and environment (AGENTMAIL_SMTP_RELAY, AGENTMAIL_MAIL_FROM,
// AGENTMAIL_MAIL_DOMAIN, AGENTMAIL_SMTP_LISTEN, AGENTMAIL_TLS_CERT/_KEY,
// AGENTMAIL_PUBLIC_URL, AGENTMAIL_INBOUND_REQUIRE_DKIM, ...). The zero
// Config is "no email": nothing changes.
type Config struct {
	// Relay is the outbound relay: smtp://user:pass@host:587 (STARTTLS,
	// required unless ?insecure=1) or smtps://user:pass@host:465 (implicit
	// TLS). "" sends no email.
	Relay string
	// From is the sender of every email: "AgentMail <agentmail@example.com>".
	// The display name becomes "<sender> via AgentMail".
	From string
	// Domain is the domain of reply addresses r+<token>@Domain and of
	// Message-IDs; default the domain of From.
	Domain string
	// Listen is the inbound SMTP address (0.0.0.0:25 behind an MX record,
	// 127.0.0.1:2525 behind an MTA); "" takes no replies by email.
	Listen string
	// TLSCert and TLSKey are PEM files offered with STARTTLS on Listen.
	TLSCert, TLSKey string
	// PublicURL is the gateway's address as people reach it, for links
	// (https://agentmail.example.com).
	PublicURL string
	// RequireDKIM refuses replies without a DKIM signature; a signature
	// that is present must verify either way.
	RequireDKIM bool
	// MaxMessageBytes bounds one inbound message; default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// RepliesPerHour and BytesPerDay bound what one person sends in;
	// beyond them replies are refused with a temporary failure (451).
	RepliesPerHour int
	BytesPerDay    int64
	// RetryMin and RetryMax bound the backoff between delivery attempts
	// after temporary failures (doubling from RetryMin); GiveUpAfter ends
	// the retries of an email that long after it was queued.
	RetryMin, RetryMax, GiveUpAfter time.Duration
	// PollInterval is how often the outbox looks at the event log and for
	// due deliveries when nothing woke it; default 1 s.
	PollInterval time.Duration
	// LookupTXT answers DNS TXT records for DKIM keys; nil is the system
	// resolver.
	LookupTXT func(domain string) ([]string, error)
	// RelayTLS, when set, is the TLS configuration for the relay (tests:
	// a private CA).
	RelayTLS *tls.Config
}

// Enabled reports whether email is sent at all.
func (c Config) Enabled() bool { return strings.TrimSpace(c.Relay) != "" }

// relay is a parsed Relay URL.
type relay struct {
	addr        string // host:port
	host        string
	implicitTLS bool // smtps://
	insecure    bool // ?insecure=1: TLS not required, certificate not checked
	user, pass  string
}

// String names the relay without its password (for logs and /readyz).
func (r relay) String() string {
	scheme := "smtp"
	if r.implicitTLS {
		scheme = "smtps"
	}
	return scheme + "://" + r.addr
}

func parseRelay(raw string) (relay, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return relay{}, fmt.Errorf("AGENTMAIL_SMTP_RELAY: %w", err)
	}
	var r relay
	switch u.Scheme {
	case "smtp":
	case "smtps":
		r.implicitTLS = true
	default:
		return relay{}, fmt.Errorf("AGENTMAIL_SMTP_RELAY %q: use smtp://user:pass@host:587 or smtps://user:pass@host:465", u.Redacted())
	}
	r.host = u.Hostname()
	if r.host == "" {
		return relay{}, fmt.Errorf("AGENTMAIL_SMTP_RELAY %q: no host", u.Redacted())
	}
	port := u.Port()
	if port == "" {
		port = "587"
		if r.implicitTLS {
			port = "465"
		}
	}
	r.addr = net.JoinHostPort(r.host, port)
	if u.User != nil {
		r.user = u.User.Username()
		r.pass, _ = u.User.Password()
	}
	switch v := u.Query().Get("insecure"); v {
	case "", "0", "false":
	case "1", "true":
		r.insecure = true
	default:
		return relay{}, fmt.Errorf("AGENTMAIL_SMTP_RELAY: insecure=%q: want 1 or 0", v)
	}
	return r, nil
}

// settings is a checked Config with its defaults filled in.
type settings struct {
	Config
	relay    relay
	from     mail.Address
	fromName string // the display name of From ("AgentMail")
}

func (c Config) check() (*settings, error) {
	s := &settings{Config: c}
	var err error
	if s.relay, err = parseRelay(c.Relay); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.From) == "" {
		return nil, errors.New("AGENTMAIL_MAIL_FROM is required with AGENTMAIL_SMTP_RELAY, e.g. \"AgentMail <agentmail@agents.example.com>\"")
	}
	from, err := mail.ParseAddress(c.From)
	if err != nil {
		return nil, fmt.Errorf("AGENTMAIL_MAIL_FROM %q: %w", c.From, err)
	}
	s.from, s.fromName = *from, from.Name
	if s.fromName == "" {
		s.fromName = "AgentMail"
	}
	if s.Domain == "" {
		s.Domain = from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	}
	s.Domain = strings.ToLower(strings.TrimSpace(s.Domain))
	if s.Domain == "" || strings.ContainsAny(s.Domain, "@ <>\"\r\n") {
		return nil, fmt.Errorf("AGENTMAIL_MAIL_DOMAIN %q: want a domain such as agents.example.com", c.Domain)
	}
	pub, err := url.Parse(strings.TrimSpace(c.PublicURL))
	if c.PublicURL == "" || err != nil || (pub.Scheme != "http" && pub.Scheme != "https") || pub.Host == "" {
		return nil, fmt.Errorf("AGENTMAIL_PUBLIC_URL %q: want the gateway's address as people reach it, e.g. https://agentmail.example.com (links in the emails)", c.PublicURL)
	}
	s.PublicURL = strings.TrimRight(pub.String(), "/")
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return nil, errors.New("AGENTMAIL_TLS_CERT and AGENTMAIL_TLS_KEY go together")
	}
	if s.MaxMessageBytes <= 0 {
		s.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if s.RepliesPerHour <= 0 {
		s.RepliesPerHour = DefaultRepliesPerHour
	}
	if s.BytesPerDay <= 0 {
		s.BytesPerDay = DefaultBytesPerDay
	}
	if s.RetryMin <= 0 {
		s.RetryMin = DefaultRetryMin
	}
	if s.RetryMax < s.RetryMin {
		s.RetryMax = max(DefaultRetryMax, s.RetryMin)
	}
	if s.GiveUpAfter <= 0 {
		s.GiveUpAfter = DefaultGiveUpAfter
	}
	if s.PollInterval <= 0 {
		s.PollInterval = time.Second
	}
	if s.LookupTXT == nil {
		s.LookupTXT = net.LookupTXT
	}
	return s, nil
}

// backoff answers the wait before attempt n+1 after n failed attempts:
// RetryMin doubling up to RetryMax.
func (s *settings) backoff(attempts int) time.Duration {
	d := s.RetryMin
	for i := 1; i < attempts && d < s.RetryMax; i++ {
		d *= 2
	}
	return min(d, s.RetryMax)
}
