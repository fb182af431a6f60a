package emailchannel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/agentmail/agentmail/internal/blob"
	"github.com/agentmail/agentmail/internal/gateway"
)

// Channel is the email channel of one gateway process: the outbox filler
// and sender loops and, with Config.Listen, the inbound SMTP server.
type Channel struct {
	cfg   *settings
	svc   *gateway.Service
	blobs *blob.Store
	log   *slog.Logger
	// maxAttachmentBytes bounds one attachment of a reply (the gateway's
	// upload limit).
	maxAttachmentBytes int64

	wake     chan struct{} // the filler looks at the event log at once
	sendWake chan struct{} // the sender looks for due entries at once

	mu    sync.Mutex
	state RelayState

	server *smtp.Server
	ln     net.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// RelayState is what /readyz and the logs say about the outbound relay.
type RelayState struct {
	// Relay names the relay without credentials (smtp://host:587).
	Relay string `json:"relay"`
	// Status is "unknown" (nothing tried yet), "ok" or "failing".
	Status string `json:"status"`
	// Error is the last failure ("" when ok).
	Error string `json:"error,omitempty"`
	// Since is when Status last changed.
	Since time.Time `json:"since"`
	// Pending is how many emails wait for delivery (filled by State).
	Pending int `json:"pending"`
}

// New checks cfg and builds the channel over the gateway service. blobs is
// the attachment store replies' attachments go to (nil: replies with
// attachments are refused), maxAttachmentBytes its limit per file.
func New(svc *gateway.Service, blobs *blob.Store, maxAttachmentBytes int64, cfg Config, log *slog.Logger) (*Channel, error) {
	s, err := cfg.check()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Channel{cfg: s, svc: svc, blobs: blobs, log: log.With("component", "email"), maxAttachmentBytes: maxAttachmentBytes,
		wake: make(chan struct{}, 1), sendWake: make(chan struct{}, 1), state: RelayState{Relay: s.relay.String(), Status: "unknown", Since: time.Now().UTC()}}, nil
}

// Start sets the outbox cursor on the first start (the email channel
// follows the event log from now on, never mailing the past), starts the
// loops and opens the inbound listener. The loops run until Close.
func (c *Channel) Start(ctx context.Context) error {
	q := c.svc.Store.Read()
	if _, err := q.EmailCursor(ctx); err != nil {
		last, err := q.MaxEventID(ctx)
		if err != nil {
			return err
		}
		if err := c.svc.Store.Write(ctx, func(tx *storeQ) error { return tx.InitEmailCursor(ctx, last) }); err != nil {
			return fmt.Errorf("email: set the outbox cursor: %w", err)
		}
	}
	if c.cfg.Listen != "" {
		if err := c.listen(); err != nil {
			return err
		}
	}
	lctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.fillLoop(lctx) }()
	go func() { defer c.wg.Done(); c.sendLoop(lctx) }()
	c.log.Info("email channel started", "relay", c.cfg.relay.String(), "from", c.cfg.from.Address,
		"reply_domain", c.cfg.Domain, "inbound", c.InboundAddr())
	return nil
}

// listen opens the inbound SMTP listener (STARTTLS with the configured
// certificate).
func (c *Channel) listen() error {
	srv := smtp.NewServer(&backend{c: c})
	srv.Domain = c.cfg.Domain
	srv.MaxMessageBytes = c.cfg.MaxMessageBytes
	srv.MaxRecipients = 1
	srv.ReadTimeout = 2 * time.Minute
	srv.WriteTimeout = 2 * time.Minute
	srv.EnableSMTPUTF8 = true
	srv.ErrorLog = slogLogger{c.log}
	if c.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.cfg.TLSCert, c.cfg.TLSKey)
		if err != nil {
			return fmt.Errorf("AGENTMAIL_TLS_CERT/AGENTMAIL_TLS_KEY: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", c.cfg.Listen)
	if err != nil {
		return fmt.Errorf("AGENTMAIL_SMTP_LISTEN %s: %w", c.cfg.Listen, err)
	}
	c.server, c.ln = srv, ln
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, smtp.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			c.log.Error("inbound SMTP server stopped", "err", err)
		}
	}()
	return nil
}

// InboundAddr answers the inbound listener's address (host:port), or ""
// without one.
func (c *Channel) InboundAddr() string {
	if c.ln == nil {
		return ""
	}
	return c.ln.Addr().String()
}

// Notify wakes the outbox after a commit; it never blocks.
func (c *Channel) Notify() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Channel) wakeSender() {
	select {
	case c.sendWake <- struct{}{}:
	default:
	}
}

// AuthEmail is the AuthKind of a person acting through a reply by email:
// the reply token, the verified From address and DKIM where present
// authenticated them (inbound.go).
const AuthEmail = "email"

// Close stops the listener and the loops; a delivery in progress finishes
// or is cut off when ctx ends (its entry is then retried after its lease).
func (c *Channel) Close(ctx context.Context) error {
	var err error
	if c.server != nil {
		err = c.server.Shutdown(ctx)
		if errors.Is(err, smtp.ErrServerClosed) {
			err = nil
		}
	}
	if c.cancel != nil {
		c.cancel()
	}
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
	return err
}

// State answers the relay's state and the number of emails waiting.
func (c *Channel) State(ctx context.Context) RelayState {
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	n, err := c.svc.Store.Read().CountPendingOutbox(ctx)
	if err == nil {
		st.Pending = n
	}
	return st
}

// setState records the outcome of talking to the relay.
func (c *Channel) setState(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	status, msg := "ok", ""
	if err != nil {
		status, msg = "failing", err.Error()
	}
	if status != c.state.Status {
		c.state.Since = time.Now().UTC()
		if err != nil {
			c.log.Warn("mail relay failing", "relay", c.state.Relay, "err", err)
		} else if c.state.Status == "failing" {
			c.log.Info("mail relay back", "relay", c.state.Relay)
		}
	}
	c.state.Status, c.state.Error = status, msg
}

// slogLogger is go-smtp's error log on slog.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Printf(format string, v ...any) { s.l.Debug("smtp: " + fmt.Sprintf(format, v...)) }
func (s slogLogger) Println(v ...any)               { s.l.Debug("smtp: " + fmt.Sprint(v...)) }
