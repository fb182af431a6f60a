package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/spf13/cobra"
)

// DefaultURL is offered at the login prompt when nothing else is known.
const DefaultURL = "http://127.0.0.1:8180"

// NewLoginCommand returns `agentmail login`: it asks for the gateway URL,
// username and password (flags --url and --username, password from
// --password-stdin or a prompt without echo), signs in with a cookie
// session, creates a permanent user key labelled "cli@<hostname>"
// (POST /api/v1/me/keys), stores {url, token} in the config file with mode
// 0600 and ends the cookie session. A previous key of the same account on
// the same gateway, stored in that file, is revoked.
func NewLoginCommand(env *Env) *cobra.Command {
	var url, username, label string
	var passwordStdin, asJSON bool
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Sign in and store a user key for the other commands",
		Long: `Sign in to a gateway and store a user key for the other commands.

The key is created with the label cli@<hostname> and saved with mode 0600 in
$AGENTMAIL_CONFIG, or <user config dir>/agentmail/cli.json.
Without --url or --username the command asks for them; the password is asked
without echo, or read from stdin with --password-stdin:

  echo "$PASSWORD" | agentmail login --url http://gw:8180 --username ann --password-stdin`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			prev := env.readStoredConfig()
			if passwordStdin && (url == "" || username == "") {
				return usageErr("login: --password-stdin needs --url and --username, since stdin carries the password")
			}
			var err error
			if url == "" {
				def := DefaultURL
				if u := env.gatewayURLVar(); u != "" {
					def = u
				} else if prev != nil && prev.URL != "" {
					def = prev.URL
				}
				if url, err = env.prompt("Gateway URL", def); err != nil {
					return err
				}
			}
			if username == "" {
				def := ""
				if prev != nil {
					def = prev.Username
				}
				if username, err = env.prompt("Username", def); err != nil {
					return err
				}
			}
			password, err := env.password(passwordStdin)
			if err != nil {
				return err
			}
			if strings.TrimSpace(url) == "" || strings.TrimSpace(username) == "" {
				return usageErr("login: the gateway URL and the username must not be empty")
			}
			if label == "" {
				host, herr := env.Hostname()
				if herr != nil || host == "" {
					host = "unknown-host"
				}
				label = "cli@" + host
			}

			var opts []client.Option
			if env.HTTPClient != nil {
				opts = append(opts, client.WithHTTPClient(env.HTTPClient))
			}
			if url, err = GatewayURL(url, "--url"); err != nil {
				return err
			}
			c := client.New(url, append(opts, client.WithCookieJar(), client.WithUserAgent("agentmail-cli/1"))...)
			lr, err := c.Login(ctx, client.LoginRequest{Username: strings.TrimSpace(username), Password: password})
			if err != nil {
				return apiErr("login", err)
			}
			key, err := c.CreateUserKey(ctx, client.CreateUserKeyRequest{Label: label, Lifecycle: client.LifecyclePermanent})
			if err != nil {
				_ = c.Logout(ctx)
				return apiErr("login: create the user key", err)
			}
			if key.KeyToken == "" {
				_ = c.Logout(ctx)
				return errorf(ExitError, nil, "login: the gateway created key %s but returned no token", key.KeyID)
			}
			if prev != nil && prev.KeyID != "" && prev.KeyID != key.KeyID && prev.Username == lr.Username && sameGateway(prev.URL, c.BaseURL()) {
				if err := c.DeleteUserKey(ctx, prev.KeyID); err != nil && !client.IsNotFound(err) {
					env.errf("warning: could not revoke the previous key %s: %v\n", prev.KeyID, err)
				}
			}
			cfg := &Config{URL: c.BaseURL(), Token: key.KeyToken, Username: lr.Username, KeyID: key.KeyID, Language: string(langEN)}
			if me, err := c.Me(ctx); err == nil && me.Language == string(langZH) {
				cfg.Language = me.Language
			}
			env.language = lang(cfg.Language)
			path, err := env.saveConfig(cfg)
			if err != nil {
				_ = c.DeleteUserKey(ctx, key.KeyID) // do not leave an unstored key behind
				_ = c.Logout(ctx)
				return err
			}
			_ = c.Logout(ctx) // the cookie session is no longer needed
			if asJSON {
				return env.printJSON(map[string]any{"url": cfg.URL, "username": lr.Username, "role": lr.Role, "key_id": key.KeyID, "label": label, "config": path})
			}
			env.outf("Logged in to %s as %s (%s).\nUser key %s (%s, %s) saved in %s\n", cfg.URL, lr.Username, lr.Role, key.KeyID, label, shortToken(key.KeyToken), path)
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "gateway URL, e.g. "+DefaultURL)
	cmd.Flags().StringVar(&username, "username", "", "account name")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from stdin")
	cmd.Flags().StringVar(&label, "label", "", "label of the created key (default cli@<hostname>)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return env.setup(cmd)
}

// prompt asks on Stderr and reads one line; an empty answer takes def.
func (e *Env) prompt(label, def string) (string, error) {
	if def != "" {
		e.errf("%s [%s]: ", word(label), def)
	} else {
		e.errf("%s: ", word(label))
	}
	line, err := e.readLine()
	if err != nil {
		if err == io.EOF {
			return "", usageErr("login: no answer for %s on stdin; pass it as a flag", word(strings.ToLower(label)))
		}
		return "", errorf(ExitError, err, "read %s", word(strings.ToLower(label)))
	}
	line = strings.TrimSpace(line)
	if line == "" {
		line = def
	}
	return line, nil
}

// password reads the password: all of stdin with fromStdin (one trailing
// line end removed), else a prompt without echo on a terminal, else one
// line of stdin.
func (e *Env) password(fromStdin bool) (string, error) {
	if fromStdin {
		raw, err := io.ReadAll(e.in())
		if err != nil {
			return "", &Error{Code: ExitError, Msg: "read the password from stdin", Err: err}
		}
		pw := strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
		if pw == "" {
			return "", usageErr("login: --password-stdin got an empty password")
		}
		return pw, nil
	}
	e.errf("Password: ")
	if e.isTerminal() && e.ReadPassword != nil {
		pw, err := e.ReadPassword()
		fmt.Fprintln(e.Stderr)
		if err != nil {
			return "", &Error{Code: ExitError, Msg: "read the password", Err: err}
		}
		return pw, nil
	}
	line, err := e.readLine()
	if err != nil {
		return "", usageErr("login: no password on stdin; use --password-stdin or a terminal")
	}
	return line, nil
}

// NewLogoutCommand returns `agentmail logout`: it revokes the stored user
// key (DELETE /api/v1/me/keys/{key_id}; a key already gone is fine) and
// deletes the config file.
func NewLogoutCommand(env *Env) *cobra.Command {
	var keep bool
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "Revoke the stored user key and forget it",
		Long:  `Revoke the user key stored by "agentmail login" and delete the config file. With --keep-key the key stays valid on the gateway and only the file is removed.`,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := env.ConfigPath()
			if err != nil {
				return err
			}
			cfg := env.readStoredConfig()
			if cfg == nil {
				return errorf(ExitAuth, nil, "not logged in: no key stored in %s", path)
			}
			if !keep && cfg.KeyID != "" {
				var opts []client.Option
				if env.HTTPClient != nil {
					opts = append(opts, client.WithHTTPClient(env.HTTPClient))
				}
				c := client.New(cfg.URL, append(opts, client.WithToken(cfg.Token))...)
				if err := c.DeleteUserKey(cmd.Context(), cfg.KeyID); err != nil && !client.IsNotFound(err) && !client.IsUnauthorized(err) {
					return apiErr("logout: revoke key "+cfg.KeyID+" (use --keep-key to only forget it)", err)
				}
			}
			if err := os.Remove(path); err != nil {
				return errorf(ExitError, err, "logout: delete %s", path)
			}
			if keep {
				env.outf("Forgot the key of %s at %s (still valid on the gateway); removed %s\n", cfg.Username, cfg.URL, path)
			} else {
				env.outf("Logged out of %s: key %s revoked, %s removed\n", cfg.URL, cfg.KeyID, path)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&keep, "keep-key", false, "do not revoke the key, only delete the config file")
	return env.setup(cmd)
}
