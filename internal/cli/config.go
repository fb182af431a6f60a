package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// Config is what `agentmail login` stores: the gateway and the user key of
// this command-line client. The file holds a secret and is written with
// mode 0600 in a 0700 directory.
type Config struct {
	URL      string `json:"url"`                // gateway root, e.g. "http://127.0.0.1:8180"
	Token    string `json:"token"`              // the user key
	Username string `json:"username,omitempty"` // whose key it is
	KeyID    string `json:"key_id,omitempty"`   // to revoke it at logout
	// Language is the person's language as the gateway answered it last
	// ("en" or "zh"), for the texts of a command that fails before it
	// reaches the gateway.
	Language string `json:"language,omitempty"`
}

// ConfigPath returns where the login is stored: $AGENTMAIL_CONFIG, else
// <user config dir>/agentmail/cli.json (os.UserConfigDir: ~/.config on
// Linux).
func (e *Env) ConfigPath() (string, error) {
	if p := e.Getenv("AGENTMAIL_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := e.UserConfigDir()
	if err != nil {
		return "", &Error{Code: ExitError, Msg: "find the user config directory (set AGENTMAIL_CONFIG to a file path instead)", Err: err}
	}
	return filepath.Join(dir, "agentmail", "cli.json"), nil
}

// loadConfig reads the stored login; AGENTMAIL_GATEWAY_URL (the name every
// command shares; the old AGENTMAIL_URL is still read, with a note) and
// AGENTMAIL_USER_KEY override (or replace) its url and token. A key
// without any URL goes to DefaultURL. The stored key is sent only to the
// gateway it was issued for (sameGateway): with another
// AGENTMAIL_GATEWAY_URL and no AGENTMAIL_USER_KEY the error is ExitAuth,
// naming both addresses and `agentmail login --url`. Without a key, the error is ExitAuth
// and tells to run `agentmail login` or set AGENTMAIL_USER_KEY.
func (e *Env) loadConfig() (*Config, error) {
	cfg := &Config{}
	path, err := e.ConfigPath()
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, cfg); err != nil {
			return nil, errorf(ExitError, err, "read %s (fix or delete it, then run `agentmail login`)", path)
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, errorf(ExitError, err, "read %s", path)
	}
	issuedFor := cfg.URL
	if issuedFor == "" {
		issuedFor = DefaultURL
	}
	if u := e.gatewayURLVar(); u != "" {
		if cfg.URL, err = GatewayURL(u, "AGENTMAIL_GATEWAY_URL"); err != nil {
			return nil, err
		}
	}
	if k := strings.TrimSpace(e.Getenv("AGENTMAIL_USER_KEY")); k != "" {
		cfg.Token = k
	} else if cfg.Token != "" && cfg.URL != "" && !sameGateway(cfg.URL, issuedFor) {
		// The stored key is sent only to the gateway it was issued for:
		// another AGENTMAIL_GATEWAY_URL would hand it to whoever listens there.
		return nil, errorf(ExitAuth, nil, "the login key stored in %s was issued for the gateway at %s, and AGENTMAIL_GATEWAY_URL names %s; the key is never sent to another address\n  what to do: run `agentmail login --url %s` to log in to that gateway, or unset AGENTMAIL_GATEWAY_URL to use %s (or set AGENTMAIL_USER_KEY to a key of that gateway)",
			path, issuedFor, cfg.URL, cfg.URL, issuedFor)
	}
	if cfg.Token == "" {
		return nil, errorf(ExitAuth, nil, "not logged in (no key in %s): run `agentmail login`, or set AGENTMAIL_USER_KEY (and AGENTMAIL_GATEWAY_URL unless the gateway is at %s)", path, DefaultURL)
	}
	if cfg.URL == "" {
		cfg.URL = DefaultURL
	}
	return cfg, nil
}

// sameGateway reports whether two gateway addresses name the same gateway:
// compared after GatewayURL and the client's BaseURL (a trailing slash or
// /api/v1 dropped), with scheme and host in lower case and the default
// port (80 for http, 443 for https) dropped. An address that does not parse is the same as none.
func sameGateway(a, b string) bool {
	na, nb := normalGatewayURL(a), normalGatewayURL(b)
	return na != "" && na == nb
}

// normalGatewayURL answers raw in the form sameGateway compares, "" when
// it is no gateway address.
func normalGatewayURL(raw string) string {
	u, err := GatewayURL(raw, "")
	if err != nil {
		return ""
	}
	p, err := url.Parse(client.New(u).BaseURL())
	if err != nil {
		return ""
	}
	scheme, host, port := strings.ToLower(p.Scheme), strings.ToLower(p.Hostname()), p.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + strings.TrimRight(p.EscapedPath(), "/")
}

// GatewayURL answers a gateway address as the client needs it: "host:port"
// or "host" gets http:// in front (issue 18: `--url 127.0.0.1:8180` gave a
// parse error). Errors (ExitUsage, naming what): a scheme other than http or
// https, no host, or text that is no URL; the message shows what to write.
func GatewayURL(raw, what string) (string, error) {
	u := strings.TrimSpace(raw)
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return "", errorf(ExitUsage, nil, "%s %q is not a gateway address: write it like %s or 127.0.0.1:8180", what, raw, DefaultURL)
	}
	return u, nil
}

// gatewayURLVar answers AGENTMAIL_GATEWAY_URL, else the old name
// AGENTMAIL_URL (noting once on stderr that it is the old name), else "".
func (e *Env) gatewayURLVar() string {
	if u := strings.TrimSpace(e.Getenv("AGENTMAIL_GATEWAY_URL")); u != "" {
		return u
	}
	u := strings.TrimSpace(e.Getenv("AGENTMAIL_URL"))
	if u != "" {
		e.oldURLNote.Do(func() {
			e.errf("note: AGENTMAIL_URL is the old name of AGENTMAIL_GATEWAY_URL; it still works, but rename it\n")
		})
	}
	return u
}

// saveConfig writes cfg atomically with mode 0600 (directory 0700).
func (e *Env) saveConfig(cfg *Config) (string, error) {
	path, err := e.ConfigPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", &Error{Code: ExitError, Msg: "create the config directory", Err: err}
	}
	raw, _ := json.MarshalIndent(cfg, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cli-*.json")
	if err != nil {
		return "", errorf(ExitError, err, "write %s", path)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	werr := tmp.Chmod(0o600)    // CreateTemp already uses 0600; say it anyway
	if werr == nil {
		_, werr = tmp.Write(append(raw, '\n'))
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		return "", errorf(ExitError, werr, "write %s", path)
	}
	return path, nil
}

// readStoredConfig reads the stored file only (no environment overrides);
// nil when there is none or it is unreadable.
func (e *Env) readStoredConfig() *Config {
	path, err := e.ConfigPath()
	if err != nil {
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var cfg Config
	if json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	return &cfg
}

// shortToken shows the start of a token, never the whole secret.
func shortToken(tok string) string {
	tok = strings.TrimSpace(tok)
	if len(tok) <= 8 {
		return "…"
	}
	return tok[:8] + "…"
}
