package emailchannel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/agentmail/agentmail/internal/store"
)

// leaseFor is how long a sender holds an entry it is delivering; one that
// died holding it leaves the entry to be delivered again after that.
const leaseFor = 3 * time.Minute

// Timeouts of one delivery; together well under leaseFor.
const (
	dialTimeout    = 20 * time.Second
	commandTimeout = 40 * time.Second
	dataTimeout    = 90 * time.Second
)

// relayError is a failure to reach or use the relay itself (connection,
// TLS, authentication): the entry is not at fault and is retried, and
// /readyz shows the relay failing.
type relayError struct{ err error }

func (e *relayError) Error() string { return e.err.Error() }
func (e *relayError) Unwrap() error { return e.err }

// sendLoop delivers due outbox entries until ctx ends. It probes the relay
// at start and whenever it has not talked to it for RetryMax, so /readyz
// tells that the relay went down or came back even when no email waits.
func (c *Channel) sendLoop(ctx context.Context) {
	c.setState(c.probe(ctx))
	lastContact := time.Now()
	for {
		if c.deliverDue(ctx) {
			lastContact = time.Now()
		}
		wait := c.cfg.PollInterval
		if due, err := c.svc.Store.Read().NextOutboxDue(ctx); err == nil {
			if d := time.Until(due); d < wait {
				wait = max(d, 10*time.Millisecond)
			}
		}
		if time.Since(lastContact) >= c.cfg.RetryMax {
			c.setState(c.probe(ctx))
			lastContact = time.Now()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-c.sendWake:
		case <-t.C:
		}
		t.Stop()
	}
}

// deliverDue delivers entries until none is due; it reports whether it
// talked to the relay.
func (c *Channel) deliverDue(ctx context.Context) bool {
	contacted := false
	for ctx.Err() == nil {
		var row store.OutboxRow
		now := c.svc.Now()
		err := c.svc.Store.Write(ctx, func(tx *store.Q) error {
			var err error
			row, err = tx.ClaimOutbox(ctx, now, now.Add(leaseFor))
			return err
		})
		if errors.Is(err, store.ErrNotFound) {
			return contacted
		}
		if err != nil {
			if ctx.Err() == nil {
				c.log.Warn("email outbox: claim an entry", "err", err)
			}
			return contacted
		}
		contacted = true
		c.finish(ctx, row, c.deliver(ctx, row))
	}
	return contacted
}

// finish records a delivery's outcome: sent; given up on a permanent
// refusal (5xx) or after GiveUpAfter of temporary failures; else retried
// with backoff.
func (c *Channel) finish(ctx context.Context, row store.OutboxRow, err error) {
	now := c.svc.Now()
	state, msg, next := store.OutboxSent, "", now
	var re *relayError
	var se *smtp.SMTPError
	switch {
	case err == nil:
		c.setState(nil)
		c.log.Info("email sent", "outbox_id", row.OutboxID, "kind", row.Kind, "mail_id", row.MailID, "to_person", row.Username,
			"message_id", row.MessageID, "attempts", row.Attempts)
	case errors.As(err, &re):
		c.setState(err)
		state, msg, next = store.OutboxPending, "the mail relay could not be reached: "+err.Error(), now.Add(c.cfg.backoff(row.Attempts))
	case errors.As(err, &se) && se.Code >= 500:
		c.setState(nil)
		state, msg = store.OutboxFailed, fmt.Sprintf("the mail relay refused it: %d %s", se.Code, se.Message)
	default:
		c.setState(nil)
		state, msg, next = store.OutboxPending, "temporary failure: "+err.Error(), now.Add(c.cfg.backoff(row.Attempts))
	}
	if state == store.OutboxPending && now.Sub(row.CreatedAt) >= c.cfg.GiveUpAfter {
		state, msg = store.OutboxFailed, fmt.Sprintf("gave up after %d attempts over %s; last: %s", row.Attempts, c.cfg.GiveUpAfter, msg)
	}
	if state != store.OutboxSent {
		lvl := "will retry"
		if state == store.OutboxFailed {
			lvl = "given up"
		}
		c.log.Warn("email not delivered, "+lvl, "outbox_id", row.OutboxID, "kind", row.Kind, "mail_id", row.MailID,
			"to_person", row.Username, "attempts", row.Attempts, "reason", msg, "next_attempt_at", next)
	}
	// The outcome is written even when ctx ended meanwhile: the relay may
	// have taken the email, and a lost "sent" would send it again.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := c.svc.Store.Write(wctx, func(tx *store.Q) error {
		return tx.FinishOutbox(wctx, row.OutboxID, state, truncate(msg, 1000), now, next)
	}); err != nil {
		c.log.Error("email outbox: record a delivery", "outbox_id", row.OutboxID, "err", err)
	}
}

// dial opens an SMTP conversation with the relay: implicit TLS for
// smtps://, STARTTLS for smtp:// (required unless insecure=1, which uses
// it when offered without checking the certificate), then AUTH PLAIN when
// the URL has a user. Every failure here is a relayError.
func (c *Channel) dial(ctx context.Context) (*smtp.Client, error) {
	r := c.cfg.relay
	tlsCfg := &tls.Config{ServerName: r.host, MinVersion: tls.VersionTLS12}
	if c.cfg.RelayTLS != nil {
		tlsCfg = c.cfg.RelayTLS.Clone()
		if tlsCfg.ServerName == "" {
			tlsCfg.ServerName = r.host
		}
	}
	if r.insecure {
		tlsCfg.InsecureSkipVerify = true
	}
	connect := func() (net.Conn, error) {
		d := net.Dialer{Timeout: dialTimeout}
		conn, err := d.DialContext(ctx, "tcp", r.addr)
		if err != nil {
			return nil, err
		}
		_ = conn.SetDeadline(time.Now().Add(dataTimeout + commandTimeout))
		return conn, nil
	}
	conn, err := connect()
	if err != nil {
		return nil, &relayError{err}
	}
	var cl *smtp.Client
	switch {
	case r.implicitTLS:
		cl = smtp.NewClient(tls.Client(conn, tlsCfg))
	case !r.insecure:
		if cl, err = smtp.NewClientStartTLS(conn, tlsCfg); err != nil {
			return nil, &relayError{fmt.Errorf("STARTTLS with %s: %w (use smtps:// for implicit TLS, or ?insecure=1 for a relay without TLS)", r.addr, err)}
		}
	default:
		cl = smtp.NewClient(conn)
		if err := cl.Hello(c.cfg.Domain); err != nil {
			cl.Close()
			return nil, &relayError{err}
		}
		if ok, _ := cl.Extension("STARTTLS"); ok {
			cl.Close()
			if conn, err = connect(); err != nil {
				return nil, &relayError{err}
			}
			if cl, err = smtp.NewClientStartTLS(conn, tlsCfg); err != nil {
				return nil, &relayError{err}
			}
		}
	}
	cl.CommandTimeout, cl.SubmissionTimeout = commandTimeout, dataTimeout
	if err := cl.Hello(c.cfg.Domain); err != nil && !strings.Contains(err.Error(), "Hello called after") {
		cl.Close()
		return nil, &relayError{err}
	}
	if r.user != "" {
		if err := cl.Auth(sasl.NewPlainClient("", r.user, r.pass)); err != nil {
			cl.Close()
			return nil, &relayError{fmt.Errorf("authentication at %s as %q: %w", r.addr, r.user, err)}
		}
	}
	return cl, nil
}

// deliver sends one entry through the relay.
func (c *Channel) deliver(ctx context.Context, row store.OutboxRow) error {
	cl, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.Mail(c.cfg.from.Address, nil); err != nil {
		return err
	}
	if err := cl.Rcpt(row.Address, nil); err != nil {
		return err
	}
	w, err := cl.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(row.Message)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	_ = cl.Quit()
	return nil
}

// probe connects to the relay and says goodbye: nil when it answers.
func (c *Channel) probe(ctx context.Context) error {
	cl, err := c.dial(ctx)
	if err != nil {
		return err
	}
	_ = cl.Quit()
	cl.Close()
	return nil
}

// truncate cuts s to at most n bytes of valid UTF-8.
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}
