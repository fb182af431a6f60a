package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/agentmail/agentmail/internal/blob"
	"github.com/agentmail/agentmail/internal/emailchannel"
	"github.com/agentmail/agentmail/internal/events"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/store"
)

// AppConfig is everything `agentmail serve` configures.
type AppConfig struct {
	// Addr to listen on; default 127.0.0.1:8180 (AGENTMAIL_ADDR). Port 0
	// picks a free one (App.Addr tells which).
	Addr string
	// DataDir and DatabaseURL select the database (see store.Options).
	DataDir     string
	DatabaseURL string
	// SQLiteSynchronous is store.Options.Synchronous: "full" (default) or
	// "normal" (AGENTMAIL_SQLITE_SYNCHRONOUS).
	SQLiteSynchronous string
	// AdminUser and AdminPassword create the first admin on first start;
	// an empty password is generated and handed to OnGeneratedPassword.
	AdminUser     string
	AdminPassword string
	// OnGeneratedPassword receives a generated admin password once.
	OnGeneratedPassword func(user, password string)
	// AttachmentDir is where attachment contents live; default
	// <DataDir>/attachments (AGENTMAIL_ATTACHMENT_DIR).
	AttachmentDir string
	// SweepInterval is how often permission timeouts and due reminders are
	// handled; default DefaultSweepInterval (AGENTMAIL_SWEEP_INTERVAL).
	SweepInterval time.Duration
	// AttachmentSweepInterval is how often unsent attachments and
	// unreferenced contents are removed; default
	// DefaultAttachmentSweepInterval (AGENTMAIL_ATTACHMENT_SWEEP_INTERVAL).
	AttachmentSweepInterval time.Duration
	// Clock, Gateway and Server tune the parts; zero values are defaults.
	Clock   gateway.Clock
	Gateway gateway.Config
	Server  Options
	Events  events.Options
	Log     *slog.Logger
	// Email configures the email channel (issue 20); the zero value sends
	// and takes no email.
	Email emailchannel.Config
}

// App is a running gateway: store, service, event hub and HTTP server.
type App struct {
	Store   *store.Store
	Service *gateway.Service
	Hub     *events.Hub
	Server  *Server
	Email   *emailchannel.Channel // nil without email
	http    *http.Server
	ln      net.Listener
	cancel  context.CancelFunc
	done    chan error
	log     *slog.Logger
}

// Start opens the database (taking its lock and migrating), creates the
// first admin if there is none, starts the event hub and serves HTTP.
func Start(ctx context.Context, cfg AppConfig) (*App, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8180"
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	// The listener comes first (issue 18 point 11): a busy port must fail
	// before the data directory and the first admin exist, so that a
	// generated admin password is never printed for a gateway that does
	// not start. The error wraps syscall.EADDRINUSE for the caller's hint.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	st, err := store.Open(ctx, store.Options{DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL, Synchronous: cfg.SQLiteSynchronous, Log: log})
	if err != nil {
		ln.Close()
		return nil, err
	}
	svc := gateway.New(st, cfg.Clock, cfg.Gateway, log)
	if err := svc.BackfillNameSkeletons(ctx); err != nil {
		ln.Close()
		st.Close()
		return nil, fmt.Errorf("look-alike name check: %w", err)
	}
	created, generated, err := svc.BootstrapAdmin(ctx, cfg.AdminUser, cfg.AdminPassword)
	if err != nil {
		ln.Close()
		st.Close()
		return nil, fmt.Errorf("create the first admin: %w", err)
	}
	if created {
		user := cfg.AdminUser
		if user == "" {
			user = "admin"
		}
		log.Info("created the first admin", "username", user)
		if generated != "" && cfg.OnGeneratedPassword != nil {
			cfg.OnGeneratedPassword(user, generated)
		}
	} else if cfg.AdminPassword != "" {
		// Said once a start: the variable only creates the first admin.
		log.Warn("ADMIN_PASSWORD is set but this data directory already has accounts, so it changes nothing; change a password on the web page (Account) or with `agentmail passwd`")
	}
	hubCtx, cancel := context.WithCancel(context.Background())
	hub := events.NewHub(st, cfg.Events, log)
	if err := hub.Start(hubCtx); err != nil {
		cancel()
		ln.Close()
		st.Close()
		return nil, err
	}
	svc.Notifier = hub
	srv := New(svc, hub, log, cfg.Server)
	if srv.blobs, err = blob.Open(cfg.attachmentDir()); err != nil {
		cancel()
		ln.Close()
		st.Close()
		return nil, err
	}
	go srv.runSweeps(hubCtx, positive(cfg.SweepInterval, DefaultSweepInterval),
		positive(cfg.AttachmentSweepInterval, DefaultAttachmentSweepInterval))
	var email *emailchannel.Channel
	if cfg.Email.Enabled() {
		if email, err = startEmail(ctx, svc, srv, hub, cfg.Email, log); err != nil {
			cancel()
			ln.Close()
			st.Close()
			return nil, err
		}
	}
	a := &App{Store: st, Service: svc, Hub: hub, Server: srv, Email: email, ln: ln, cancel: cancel, done: make(chan error, 1), log: log,
		http: &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}}
	go func() {
		err := a.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		a.done <- err
	}()
	log.Info("gateway listening", "addr", ln.Addr().String(), "database", st.Path())
	return a, nil
}

// attachmentDir answers AttachmentDir, or its default under DataDir
// ("./data" when that is empty too).
func (cfg AppConfig) attachmentDir() string {
	if cfg.AttachmentDir != "" {
		return cfg.AttachmentDir
	}
	dataDir := cfg.DataDir
	if dataDir == "" {
		dataDir = "./data"
	}
	return filepath.Join(dataDir, "attachments")
}

// positive answers d, or def when d is not positive.
func positive(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Addr answers the listening address (host:port).
func (a *App) Addr() string { return a.ln.Addr().String() }

// URL answers http://host:port.
func (a *App) URL() string { return "http://" + a.Addr() }

// Done yields the serve loop's error (nil after Shutdown) once it stops.
func (a *App) Done() <-chan error { return a.done }

// Shutdown stops gracefully: /readyz turns 503, event streams end, in-flight
// requests finish (until ctx ends), then the hub stops and the database and
// its lock are released.
func (a *App) Shutdown(ctx context.Context) error {
	a.Server.Drain()
	err := a.http.Shutdown(ctx)
	if a.Email != nil {
		err = errors.Join(err, a.Email.Close(ctx))
	}
	a.cancel()
	return errors.Join(err, a.Store.Close())
}
