package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmail/agentmail/internal/httpapi"
	"github.com/agentmail/agentmail/internal/webui"
)

// serveFlags are the flags of `agentmail serve`; each defaults to its
// environment variable.
var serveFlags struct {
	addr, dataDir, databaseURL, adminUser, adminPassword, logLevel string
	secureCookies                                                  bool
}

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
		lvl := slog.LevelInfo
		if err := lvl.UnmarshalText([]byte(serveFlags.logLevel)); err != nil {
			return usagef("--log-level: %w", err) // exit 2
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		app, err := httpapi.Start(ctx, httpapi.AppConfig{
			Addr: serveFlags.addr, DataDir: serveFlags.dataDir, DatabaseURL: serveFlags.databaseURL,
			AdminUser: serveFlags.adminUser, AdminPassword: serveFlags.adminPassword,
			OnGeneratedPassword: func(user, password string) {
				fmt.Fprintf(os.Stderr, "\n  First start: admin account %q created with password\n\n      %s\n\n"+
					"  It is shown only this once. Sign in and change it, or restart with ADMIN_PASSWORD set on a new data directory.\n\n",
					user, password)
			},
			Server: httpapi.Options{WebUI: webui.Handler(), SecureCookies: serveFlags.secureCookies},
			Log:    log,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "agentmail gateway on %s\n", app.URL())
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
	f.StringVar(&serveFlags.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "sqlite:///path or postgres://... (DATABASE_URL); empty: <data-dir>/agentmail.db")
	f.StringVar(&serveFlags.adminUser, "admin-user", serveEnv("ADMIN_USER", "admin"), "first admin's name (ADMIN_USER)")
	f.StringVar(&serveFlags.adminPassword, "admin-password", os.Getenv("ADMIN_PASSWORD"), "first admin's password (ADMIN_PASSWORD); empty: generated and printed once")
	f.StringVar(&serveFlags.logLevel, "log-level", serveEnv("AGENTMAIL_LOG_LEVEL", "info"), "debug, info, warn or error")
	f.BoolVar(&serveFlags.secureCookies, "secure-cookies", serveEnv("AGENTMAIL_SECURE_COOKIES", "") == "1" || serveEnv("AGENTMAIL_SECURE_COOKIES", "") == "true",
		"mark the session cookie Secure, for a gateway behind a TLS-terminating proxy (AGENTMAIL_SECURE_COOKIES=1)")
	rootCmd.AddCommand(serveCmd)
}

// serveEnv answers the environment variable, or def when it is unset or empty.
func serveEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
