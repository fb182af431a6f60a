package main

import (
	"math"
	"os"
	"time"

	"github.com/agentmail/agentmail/internal/emailchannel"
)

// emailFlags are the email channel's flags of `agentmail serve` (issue
// 20); each defaults to its environment variable. Without a relay nothing
// changes.
var emailFlags struct {
	relay, from, domain, listen, tlsCert, tlsKey, publicURL string
	requireDKIM                                             bool
	retryMin, retryMax                                      time.Duration
	repliesPerHour                                          int
	maxMessageBytes                                         int64
}

func init() {
	f := serveCmd.Flags()
	f.StringVar(&emailFlags.relay, "smtp-relay", os.Getenv("AGENTMAIL_SMTP_RELAY"),
		"outbound mail relay: smtp://user:pass@host:587 (STARTTLS; ?insecure=1 without), smtps://... (AGENTMAIL_SMTP_RELAY); empty: no email")
	f.StringVar(&emailFlags.from, "mail-from", os.Getenv("AGENTMAIL_MAIL_FROM"),
		`sender of the emails, "AgentMail <agentmail@agents.example.com>" (AGENTMAIL_MAIL_FROM)`)
	f.StringVar(&emailFlags.domain, "mail-domain", os.Getenv("AGENTMAIL_MAIL_DOMAIN"),
		"domain of the reply addresses r+<token>@DOMAIN (AGENTMAIL_MAIL_DOMAIN); default: the domain of --mail-from")
	f.StringVar(&emailFlags.listen, "smtp-listen", os.Getenv("AGENTMAIL_SMTP_LISTEN"),
		"inbound SMTP for replies, e.g. 0.0.0.0:25 or 127.0.0.1:2525 behind an MTA (AGENTMAIL_SMTP_LISTEN); empty: no replies by email")
	f.StringVar(&emailFlags.tlsCert, "tls-cert", os.Getenv("AGENTMAIL_TLS_CERT"), "PEM certificate offered with STARTTLS on --smtp-listen (AGENTMAIL_TLS_CERT)")
	f.StringVar(&emailFlags.tlsKey, "tls-key", os.Getenv("AGENTMAIL_TLS_KEY"), "PEM key of --tls-cert (AGENTMAIL_TLS_KEY)")
	f.StringVar(&emailFlags.publicURL, "public-url", os.Getenv("AGENTMAIL_PUBLIC_URL"),
		"the gateway's address as people reach it, for links in the emails (AGENTMAIL_PUBLIC_URL)")
	f.BoolVar(&emailFlags.requireDKIM, "inbound-require-dkim", serveEnv("AGENTMAIL_INBOUND_REQUIRE_DKIM", "") == "1" || serveEnv("AGENTMAIL_INBOUND_REQUIRE_DKIM", "") == "true",
		"refuse emailed replies without a DKIM signature (AGENTMAIL_INBOUND_REQUIRE_DKIM=1)")
	f.DurationVar(&emailFlags.retryMin, "mail-retry-min", serveEnvDuration("AGENTMAIL_MAIL_RETRY_MIN", emailchannel.DefaultRetryMin),
		"first wait before an email is tried again after a temporary failure, doubling (AGENTMAIL_MAIL_RETRY_MIN)")
	f.DurationVar(&emailFlags.retryMax, "mail-retry-max", serveEnvDuration("AGENTMAIL_MAIL_RETRY_MAX", emailchannel.DefaultRetryMax),
		"longest wait between two tries of an email (AGENTMAIL_MAIL_RETRY_MAX)")
	f.IntVar(&emailFlags.repliesPerHour, "inbound-replies-per-hour",
		int(serveEnvInt("AGENTMAIL_INBOUND_REPLIES_PER_HOUR", emailchannel.DefaultRepliesPerHour, math.MaxInt32)),
		"emailed replies one person may send in an hour (AGENTMAIL_INBOUND_REPLIES_PER_HOUR)")
	f.Int64Var(&emailFlags.maxMessageBytes, "inbound-max-bytes",
		serveEnvInt("AGENTMAIL_INBOUND_MAX_BYTES", emailchannel.DefaultMaxMessageBytes, math.MaxInt64),
		"largest emailed reply in bytes, attachments included (AGENTMAIL_INBOUND_MAX_BYTES)")
}

// emailConfig is the email channel's configuration from the flags.
func emailConfig() emailchannel.Config {
	return emailchannel.Config{Relay: emailFlags.relay, From: emailFlags.from, Domain: emailFlags.domain, Listen: emailFlags.listen,
		TLSCert: emailFlags.tlsCert, TLSKey: emailFlags.tlsKey, PublicURL: emailFlags.publicURL, RequireDKIM: emailFlags.requireDKIM,
		RetryMin: emailFlags.retryMin, RetryMax: emailFlags.retryMax, RepliesPerHour: emailFlags.repliesPerHour,
		MaxMessageBytes: emailFlags.maxMessageBytes}
}
