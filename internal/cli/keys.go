package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/spf13/cobra"
)

// NewKeysCommand returns `agentmail keys list|create|revoke`: the person's
// own user keys (/api/v1/me/keys), and `keys register-agent`, an admin's
// registration of the key a bridge generated (issue 18 point 4).
func NewKeysCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys list|create|revoke|register-agent",
		Short: "List, create and revoke your user keys",
		Long:  `Manage your user keys: the Bearer tokens third-party clients and scripts use to act as you.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageErr("keys: say list, create, revoke or register-agent; see agentmail keys --help")
		},
	}
	// Subcommands must refuse unknown words with a usage error, not run the
	// parent: cobra only reports unknown subcommands for the root.
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErr("keys: unknown subcommand %q; say list, create, revoke or register-agent", args[0])
		}
		return nil
	}
	cmd.AddCommand(newKeysListCommand(env), newKeysCreateCommand(env), newKeysRevokeCommand(env), newKeysRegisterAgentCommand(env))
	return env.setup(cmd)
}

func newKeysListCommand(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List your user keys",
		Long:  `List your user keys. Tokens are never shown again, only their first characters; the key this command-line client uses is marked with "*".`,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cfg, err := env.newClient()
			if err != nil {
				return err
			}
			list, err := c.ListUserKeys(cmd.Context())
			if err != nil {
				return apiErr("keys list", err)
			}
			if asJSON {
				if list.Keys == nil {
					list.Keys = []client.KeyInfo{}
				}
				return env.printJSON(list)
			}
			tw := newTable(env.Stdout)
			fmt.Fprintln(tw, env.lang().S(" \tKEY ID\tLABEL\tLIFECYCLE\tPREFIX\tCREATED\tLAST USED\tSTATE"))
			for _, k := range list.Keys {
				mark := " "
				if k.KeyID == cfg.KeyID {
					mark = "*"
				}
				last := env.lang().S("never")
				if k.LastUsedAt != nil {
					last = timeText(*k.LastUsedAt)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, k.KeyID, k.Label, lifecycleText(env.lang(), k), k.Prefix, timeText(k.CreatedAt), last, env.lang().S(keyState(k)))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's KeyList JSON")
	return env.setup(cmd)
}

func lifecycleText(l lang, k client.KeyInfo) string {
	if k.Lifecycle == client.LifecycleTimed && k.ExpiresAt != nil {
		return l.F("timed until %s", timeText(*k.ExpiresAt))
	}
	return l.S(k.Lifecycle)
}

func keyState(k client.KeyInfo) string {
	switch {
	case k.Active:
		return "active"
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !k.ExpiresAt.After(time.Now()):
		return "expired"
	case k.Lifecycle == client.LifecycleOneTime:
		return "used"
	}
	return "inactive"
}

func newKeysCreateCommand(env *Env) *cobra.Command {
	var label, lifecycle, expires string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create --label TEXT [--lifecycle permanent|one_time|timed] [--expires 24h|RFC3339]",
		Short: "Create a user key (the token is shown once)",
		Long: `Create a user key for a script or another client.
The token is printed this once only. --expires (a duration such as 24h or an
RFC 3339 time) makes a timed key; one_time keys die after their first use.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(label) == "" {
				return usageErr("keys create: --label is required (what the key is for)")
			}
			req := client.CreateUserKeyRequest{Label: label, Lifecycle: lifecycle}
			if expires != "" {
				t, err := parseExpiry(expires, time.Now())
				if err != nil {
					return usageErr("keys create: --expires %q: %s", expires, word(err.Error()))
				}
				req.ExpiresAt = &t
				if !cmd.Flags().Changed("lifecycle") {
					req.Lifecycle = client.LifecycleTimed
				}
			}
			switch req.Lifecycle {
			case client.LifecyclePermanent, client.LifecycleOneTime:
				if req.ExpiresAt != nil {
					return usageErr("keys create: --expires only goes with --lifecycle timed")
				}
			case client.LifecycleTimed:
				if req.ExpiresAt == nil {
					return usageErr("keys create: --lifecycle timed needs --expires")
				}
			default:
				return usageErr("keys create: --lifecycle must be permanent, one_time or timed, got %q", req.Lifecycle)
			}
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			key, err := c.CreateUserKey(cmd.Context(), req)
			if err != nil {
				return apiErr("keys create", err)
			}
			if asJSON {
				return env.printJSON(key)
			}
			env.outf("Created key %s (%s, %s)\n", key.KeyID, label, req.Lifecycle)
			env.outf("Token (shown once, store it now): %s\n", key.KeyToken)
			return nil
		},
	}
	cmd.Flags().StringVar(&label, "label", "", "what the key is for")
	cmd.Flags().StringVar(&lifecycle, "lifecycle", client.LifecyclePermanent, "permanent, one_time or timed")
	cmd.Flags().StringVar(&expires, "expires", "", "expiry of a timed key: a duration (24h) or an RFC 3339 time")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's CreatedKey JSON")
	return env.setup(cmd)
}

// parseExpiry reads a duration from now or an RFC 3339 time in the future.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("the duration must be positive")
		}
		return now.Add(d).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("give a duration like 24h or a time like 2026-12-31T18:00:00Z")
	}
	if !t.After(now) {
		return time.Time{}, fmt.Errorf("the time is in the past")
	}
	return t.UTC(), nil
}

func newKeysRevokeCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke one of your user keys",
		Long:  `Revoke one of your user keys; requests with it fail from now on. Revoking the key this client uses logs it out.`,
		Args:  exactArgs(1, "one key id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cfg, err := env.newClient()
			if err != nil {
				return err
			}
			if err := c.DeleteUserKey(cmd.Context(), args[0]); err != nil {
				return apiErr("keys revoke "+args[0], err)
			}
			env.outf("Revoked key %s\n", args[0])
			if args[0] == cfg.KeyID {
				env.outln("That was the key of this client; run agentmail login again.")
			}
			return nil
		},
	}
	return env.setup(cmd)
}

// newKeysRegisterAgentCommand returns `agentmail keys register-agent --agent
// NAME [--key-file PATH | --key -]`: an admin registers the key an agent's
// bridge generated and printed (B-1.1), as a permanent agent key (POST
// /api/v1/admin/agent-keys with key_token). The waiting bridge then
// connects by itself. The key is read from the file the bridge saved it to
// (--key-file), from standard input (--key -, or no --key when stdin is not
// a terminal), asked for without echo at a terminal, or, last, taken from
// --key TOKEN (which leaves it in the shell's history and the process
// list). Admins only: a person who is not one reads that only an admin may
// register agent keys (exit 5).
func newKeysRegisterAgentCommand(env *Env) *cobra.Command {
	var agent, key, keyFile string
	cmd := &cobra.Command{
		Use:   "register-agent --agent NAME [--key-file PATH | --key -]",
		Short: "Register the key an agent's bridge generated (admins)",
		Long: `Register the key an agent's bridge generated and printed when it first
started, so that the bridge, which waits for it, connects by itself.
Admins only; the same as the web page's Admin → Agent keys → "Register a key
the agent generated".

The key is read, so that it stays out of the shell's history and the list of
processes, from the file the bridge saved it to (--key-file, on the bridge's
machine), or from standard input (--key -, or no --key when input is not a
terminal; at a terminal it is asked for without echo). --key TOKEN still
works, but leaves the key where other people may see it.`,
		Example: `  agentmail keys register-agent --agent claude --key-file ~/.agentmail/agent.key
  agentmail keys register-agent --agent claude --key -      (then paste the key)`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(agent) == "" {
				return usageErr("keys register-agent: give the agent's name with --agent and the key its bridge printed with --key-file or --key -")
			}
			token, err := env.agentKeyInput(cmd.Flags().Changed("key"), key, keyFile)
			if err != nil {
				return err
			}
			c, _, err := env.newClient()
			if err != nil {
				return err
			}
			created, err := c.CreateAgentKey(cmd.Context(), client.CreateAgentKeyRequest{AgentName: strings.TrimSpace(agent),
				KeyToken: token, Lifecycle: client.LifecyclePermanent, Label: "registered with agentmail keys register-agent"})
			if err != nil {
				return apiErr("keys register-agent", err)
			}
			env.outf("Registered key %s for agent %s; its bridge connects by itself now.\n", created.KeyID, strings.TrimSpace(agent))
			return nil
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "the agent's name, as the bridge printed it")
	cmd.Flags().StringVar(&keyFile, "key-file", "", "read the key from this file (the bridge's ~/.agentmail/agent.key)")
	cmd.Flags().StringVar(&key, "key", "", "the key the bridge printed (amk_...); - reads it from standard input")
	return env.setup(cmd)
}

// maxAgentKeyInput bounds what register-agent reads for a key, in bytes.
const maxAgentKeyInput = 4096

// agentKeyInput answers the key register-agent registers, without blanks:
// the first line of keyFile; with keySet false or key "-", the first line of
// standard input (asked for without echo when it is a terminal); else key.
// Errors (usage): both --key and --key-file, a file that cannot be read, or
// an empty key.
func (e *Env) agentKeyInput(keySet bool, key, keyFile string) (string, error) {
	var line string
	switch {
	case keyFile != "" && keySet:
		return "", usageErr("keys register-agent: give the key with --key-file or with --key, not both")
	case keyFile != "":
		f, err := os.Open(keyFile)
		if err != nil {
			return "", usageErr("keys register-agent: cannot read the key file %s (%v); on another machine than the bridge's, use --key - and paste the key", keyFile, err)
		}
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(f, maxAgentKeyInput))
		line, _, _ = strings.Cut(string(b), "\n")
	case keySet && key != "-":
		line = key
	case e.isTerminal() && e.ReadPassword != nil:
		e.errf("%s: ", word("Paste the agent's key (it is not shown)"))
		pw, err := e.ReadPassword()
		fmt.Fprintln(e.Stderr)
		if err != nil {
			return "", &Error{Code: ExitError, Msg: "read the key", Err: err}
		}
		line = pw
	default:
		b, _ := io.ReadAll(io.LimitReader(e.in(), maxAgentKeyInput))
		line, _, _ = strings.Cut(string(b), "\n")
	}
	if line = strings.TrimSpace(line); line == "" {
		return "", usageErr("keys register-agent: no key was given; use --key-file PATH, or --key - with the key on standard input")
	}
	return line, nil
}
