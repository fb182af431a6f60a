package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/httpapi"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/webui"
)

// serveFlags are the flags of `agentmail serve`; each defaults to its
// environment variable.
var serveFlags struct {
	addr, dataDir, databaseURL, adminUser, adminPassword, logLevel string
	sqliteSynchronous                                              string
	secureCookies                                                  bool
	// The caps of docs/API.md "Limits" (issue 12).
	maxPendingPermissions, maxStreamsPerKey int
	attachmentQuotaBytes                    int64
	// agentOfflineAfter: an agent not seen this long is shown offline and
	// its turn tokens are revoked (gateway.Config.OnlineWithin).
	agentOfflineAfter time.Duration
}

// serveEnvErrs collects environment values of the serve flags that are
// not whole numbers in range; serve's RunE reports them as usage errors.
var serveEnvErrs []error

// serveCmd is `agentmail serve`: the gateway (HTTP API, SSE, the embedded
// web page) on one SQLite database (issue 2 item 12).
var serveCmd = &cobra.Command{
	Use:   "serve",
	Short: "Run the gateway: HTTP API, event streams and the web page",
	Long: `Run the AgentMail gateway.

Environment (flags win): AGENTMAIL_ADDR (default 127.0.0.1:8180), AGENTMAIL_DATA_DIR
(default ./data; the SQLite database is agentmail.db there), DATABASE_URL
(sqlite:///path/to/file.db, or postgres://user:pass@host:5432/agentmail for PostgreSQL),
ADMIN_USER and ADMIN_PASSWORD (create the first admin on first start; without a
password one is generated and printed once).
A second gateway on the same SQLite database refuses to start; on PostgreSQL any
number of gateways share one database as replicas (docs/OPERATIONS.md).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		if err := errors.Join(serveEnvErrs...); err != nil {
			return usagef("%w", err) // exit 2
		}
		for _, c := range []struct {
			flag string
			v    int64
		}{{"--max-pending-permissions", int64(serveFlags.maxPendingPermissions)}, {"--max-streams-per-key", int64(serveFlags.maxStreamsPerKey)},
			{"--attachment-quota-bytes", serveFlags.attachmentQuotaBytes}} {
			if c.v <= 0 {
				return usagef("%s %d: want a positive number", c.flag, c.v)
			}
		}
		if serveFlags.agentOfflineAfter <= 0 {
			return usagef("--agent-offline-after %s: want a positive duration such as 90s", serveFlags.agentOfflineAfter)
		}
		lvl := slog.LevelInfo
		if err := lvl.UnmarshalText([]byte(serveFlags.logLevel)); err != nil {
			return usagef("--log-level: %w", err) // exit 2
		}
		env, err := readServeEnv(os.Getenv)
		if err != nil {
			return err
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		app, err := httpapi.Start(ctx, httpapi.AppConfig{
			Addr: serveFlags.addr, DataDir: serveFlags.dataDir, DatabaseURL: serveFlags.databaseURL, SQLiteSynchronous: serveFlags.sqliteSynchronous,
			AdminUser: serveFlags.adminUser, AdminPassword: serveFlags.adminPassword,
			OnGeneratedPassword: func(user, password string) {
				fmt.Fprintf(os.Stderr, "\n  First start: admin account %q created with password\n\n      %s\n\n"+
					"  It is shown only this once. Sign in and change it, or restart with ADMIN_PASSWORD set on a new data directory.\n\n",
					user, password)
			},
			AttachmentDir: env.attachmentDir, SweepInterval: env.sweepInterval, AttachmentSweepInterval: env.attachmentSweepInterval,
			Gateway: gateway.Config{MaxPendingPermissions: serveFlags.maxPendingPermissions,
				AttachmentQuotaBytes: serveFlags.attachmentQuotaBytes, ScheduleLimit: env.scheduleLimit, MaxSessionsPerOwner: env.maxSessionsPerOwner,
				OnlineWithin: serveFlags.agentOfflineAfter, ReservationOfflineTTL: env.reservationOfflineTTL},
			Server: httpapi.Options{WebUI: webui.Handler(), SecureCookies: serveFlags.secureCookies,
				MaxStreamsPerKey: serveFlags.maxStreamsPerKey, MaxAttachmentBytes: env.maxAttachmentBytes,
				MCPHosts: env.mcpHosts},
			Log:   log,
			Email: emailConfig(), // serve_email.go
		})
		if errors.Is(err, syscall.EADDRINUSE) {
			// Issue 18 point 11: nothing was created; say how to pick another port.
			return fmt.Errorf("%w: another program (perhaps another agentmail serve) listens there; "+
				"stop it, or start on a free port with --addr 127.0.0.1:8181 or AGENTMAIL_ADDR=127.0.0.1:8181 "+
				"(then give the CLI and the bridge AGENTMAIL_GATEWAY_URL=http://127.0.0.1:8181)", err)
		}
		if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// A signal during the start: an ordinary stop, not an error.
			log.Info("stopped before the gateway was ready")
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "agentmail gateway on %s\n", app.URL())
		if app.Email != nil && app.Email.InboundAddr() != "" {
			fmt.Fprintf(os.Stderr, "agentmail email replies on %s\n", app.Email.InboundAddr())
		}
		select {
		case <-ctx.Done():
		case err := <-app.Done():
			if err != nil {
				return err
			}
		}
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		return app.Shutdown(sctx)
	},
}

func init() {
	f := serveCmd.Flags()
	f.StringVar(&serveFlags.addr, "addr", serveEnv("AGENTMAIL_ADDR", "127.0.0.1:8180"), "listen address (AGENTMAIL_ADDR)")
	f.StringVar(&serveFlags.dataDir, "data-dir", serveEnv("AGENTMAIL_DATA_DIR", "./data"), "data directory (AGENTMAIL_DATA_DIR)")
	f.StringVar(&serveFlags.sqliteSynchronous, "sqlite-synchronous", serveEnv("AGENTMAIL_SQLITE_SYNCHRONOUS", store.SyncFull),
		"SQLite durability (AGENTMAIL_SQLITE_SYNCHRONOUS): full (an answered mail survives a power loss) or normal (survives a killed process, not a power loss; faster)")
	f.StringVar(&serveFlags.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "sqlite:///path or postgres://... (DATABASE_URL); empty: <data-dir>/agentmail.db")
	f.StringVar(&serveFlags.adminUser, "admin-user", serveEnv("ADMIN_USER", "admin"), "first admin's name (ADMIN_USER)")
	f.StringVar(&serveFlags.adminPassword, "admin-password", os.Getenv("ADMIN_PASSWORD"), "first admin's password (ADMIN_PASSWORD); empty: generated and printed once")
	f.StringVar(&serveFlags.logLevel, "log-level", serveEnv("AGENTMAIL_LOG_LEVEL", "info"), "debug, info, warn or error")
	f.BoolVar(&serveFlags.secureCookies, "secure-cookies", serveEnv("AGENTMAIL_SECURE_COOKIES", "") == "1" || serveEnv("AGENTMAIL_SECURE_COOKIES", "") == "true",
		"mark the session cookie Secure, for a gateway behind a TLS-terminating proxy (AGENTMAIL_SECURE_COOKIES=1)")
	f.IntVar(&serveFlags.maxPendingPermissions, "max-pending-permissions",
		int(serveEnvInt("AGENTMAIL_MAX_PENDING_PERMISSIONS", gateway.DefaultMaxPendingPermissions, math.MaxInt32)),
		"undecided permission requests per session; the next is a 429 (AGENTMAIL_MAX_PENDING_PERMISSIONS)")
	f.Int64Var(&serveFlags.attachmentQuotaBytes, "attachment-quota-bytes",
		serveEnvInt("AGENTMAIL_ATTACHMENT_QUOTA_BYTES", gateway.DefaultAttachmentQuotaBytes, math.MaxInt64),
		"bytes of unsent uploads per person or agent; beyond is a 413 (AGENTMAIL_ATTACHMENT_QUOTA_BYTES)")
	f.IntVar(&serveFlags.maxStreamsPerKey, "max-streams-per-key",
		int(serveEnvInt(httpapi.EnvMaxStreamsPerKey, httpapi.DefaultMaxStreamsPerKey, math.MaxInt32)),
		"open event streams per key or cookie session, and four times that per person or agent; the next is a 429 ("+httpapi.EnvMaxStreamsPerKey+")")
	f.DurationVar(&serveFlags.agentOfflineAfter, "agent-offline-after",
		serveEnvDuration("AGENTMAIL_AGENT_OFFLINE_AFTER", gateway.DefaultOnlineWithin),
		"an agent without a heartbeat this long is shown offline and its turn tokens are revoked (AGENTMAIL_AGENT_OFFLINE_AFTER)")
	rootCmd.AddCommand(serveCmd)
}

// serveEnvDuration answers the environment variable as a positive Go
// duration ("90s"), or def when it is unset or empty; anything else is
// recorded in serveEnvErrs and answers def.
func serveEnvDuration(name string, def time.Duration) time.Duration {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		serveEnvErrs = append(serveEnvErrs, fmt.Errorf("%s=%q: want a positive duration such as 90s", name, v))
		return def
	}
	return d
}

// serveEnvInt answers the environment variable as a whole number from 1 to
// max, or def when it is unset or empty; anything else is recorded in
// serveEnvErrs and answers def.
func serveEnvInt(name string, def, max int64) int64 {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > max {
		serveEnvErrs = append(serveEnvErrs, fmt.Errorf("%s=%q: want a whole number from 1 to %d", name, v, max))
		return def
	}
	return n
}

// serveEnv answers the environment variable, or def when it is unset or empty.
func serveEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// The settings of `agentmail serve` that have no flag, read from the
// environment when it starts (docs/OPERATIONS.md).
const (
	// envMaxAttachmentBytes is the size limit of one attachment in bytes
	// (W-8); default gateway.DefaultMaxAttachmentBytes (25 MB).
	envMaxAttachmentBytes = httpapi.EnvMaxAttachmentBytes
	// envAttachmentDir is where attachment contents live; default
	// <data dir>/attachments.
	envAttachmentDir = "AGENTMAIL_ATTACHMENT_DIR"
	// envSweepInterval is how often permission timeouts and due reminders
	// are handled (a Go duration, e.g. "5s"); default 5 s.
	envSweepInterval = "AGENTMAIL_SWEEP_INTERVAL"
	// envAttachmentSweepInterval is how often unsent attachments and
	// unreferenced contents are removed; default 10 min.
	envAttachmentSweepInterval = "AGENTMAIL_ATTACHMENT_SWEEP_INTERVAL"
	// envScheduleLimit is the per-owner schedule cap; default 50.
	envScheduleLimit = "AGENTMAIL_SCHEDULE_LIMIT"
	// envMaxSessionsPerOwner is how many sessions one person or agent may
	// open; default gateway.DefaultMaxSessionsPerOwner (100000).
	envMaxSessionsPerOwner = "AGENTMAIL_MAX_SESSIONS_PER_OWNER"
	// envReservationOfflineTTL is how long the holder of a file reservation
	// may go unseen before its reservations end (a Go duration); default
	// 10 min (gateway.DefaultReservationOfflineTTL).
	envReservationOfflineTTL = "AGENTMAIL_RESERVATION_OFFLINE_TTL"
)

// serveEnvSettings holds those settings; a zero field leaves the default of the
// part it configures (httpapi.AppConfig, httpapi.Options, gateway.Config).
type serveEnvSettings struct {
	maxAttachmentBytes                     int64
	attachmentDir                          string
	sweepInterval, attachmentSweepInterval time.Duration
	scheduleLimit, maxSessionsPerOwner     int
	reservationOfflineTTL                  time.Duration
	mcpHosts                               []string
}

// readServeEnv reads the settings of `serve` without a flag through getenv
// (os.Getenv in the binary). Errors: a size or limit that is not a positive
// whole number, an interval that is not a positive Go duration; the first
// one found is answered, naming the variable and its value.
func readServeEnv(getenv func(string) string) (serveEnvSettings, error) {
	var x serveEnvSettings
	if v := strings.TrimSpace(getenv(envMaxAttachmentBytes)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return x, fmt.Errorf("%s=%q: want a positive number of bytes", envMaxAttachmentBytes, v)
		}
		x.maxAttachmentBytes = n
	}
	for _, d := range []struct {
		env string
		dst *time.Duration
	}{{envSweepInterval, &x.sweepInterval}, {envAttachmentSweepInterval, &x.attachmentSweepInterval},
		{envReservationOfflineTTL, &x.reservationOfflineTTL}} {
		if v := strings.TrimSpace(getenv(d.env)); v != "" {
			n, err := time.ParseDuration(v)
			if err != nil || n <= 0 {
				return x, fmt.Errorf("%s=%q: want a positive duration such as 5s", d.env, v)
			}
			*d.dst = n
		}
	}
	for _, l := range []struct {
		env string
		dst *int
	}{{envScheduleLimit, &x.scheduleLimit}, {envMaxSessionsPerOwner, &x.maxSessionsPerOwner}} {
		if v := strings.TrimSpace(getenv(l.env)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return x, fmt.Errorf("%s=%q: want a positive number", l.env, v)
			}
			*l.dst = n
		}
	}
	x.attachmentDir = strings.TrimSpace(getenv(envAttachmentDir))
	for _, h := range strings.Split(getenv(httpapi.EnvMCPHosts), ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			x.mcpHosts = append(x.mcpHosts, h)
		}
	}
	return x, nil
}
