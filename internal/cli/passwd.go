package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmail/agentmail/client"
)

// NewPasswdCommand returns `agentmail passwd`: it changes the signed-in
// person's password (POST /api/v1/me/password, issue 18: a newcomer with a
// generated admin password had only the web page to change it). The
// current and the new password are asked without echo (the new one twice),
// or read from stdin with --password-stdin as two lines: current, new. A
// wrong current password counts as a failed sign-in (the gateway's
// throttle); the gateway names the field at fault.
func NewPasswdCommand(env *Env) *cobra.Command {
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "passwd [--password-stdin]",
		Short: "Change your password",
		Long: `Change the password you sign in with. The current password and the new one
(twice) are asked without echo; with --password-stdin stdin carries two lines,
the current password and the new one:

  printf '%s\n%s\n' "$OLD" "$NEW" | agentmail passwd --password-stdin

Other web sign-ins of yours end; user keys (this command line's too) keep working.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			current, next, err := env.passwords(fromStdin)
			if err != nil {
				return err
			}
			if next == current {
				return usageErr("passwd: the new password is the one you have now; choose a different one (nothing was changed)")
			}
			c, cfg, err := env.newClient()
			if err != nil {
				return err
			}
			if err := c.ChangePassword(cmd.Context(), client.ChangePasswordRequest{CurrentPassword: current, NewPassword: next}); err != nil {
				return apiErr("passwd", err)
			}
			who := cfg.Username
			if who == "" {
				who = env.lang().S("you")
			}
			env.outf("Password changed for %s. Other web sign-ins are signed out; user keys keep working.\n", who)
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read two lines from stdin: the current password, then the new one")
	return env.setup(cmd)
}

// passwords reads the current and the new password for passwd. Errors
// (usage, nothing changed): an empty one, the two new ones differ, or no
// terminal and no --password-stdin.
func (e *Env) passwords(fromStdin bool) (string, string, error) {
	if fromStdin {
		current, err1 := e.readLine()
		next, err2 := e.readLine()
		if err1 != nil || err2 != nil || current == "" || next == "" {
			return "", "", usageErr("passwd: --password-stdin needs two lines: the current password, then the new one")
		}
		return current, next, nil
	}
	if !e.isTerminal() || e.ReadPassword == nil {
		return "", "", usageErr("passwd: no terminal to ask on; use --password-stdin with two lines (current, new)")
	}
	ask := func(label string) (string, error) {
		e.errf("%s: ", word(label))
		pw, err := e.ReadPassword()
		fmt.Fprintln(e.Stderr)
		if err != nil {
			return "", &Error{Code: ExitError, Msg: "read the password", Err: err}
		}
		return pw, nil
	}
	current, err := ask("Current password")
	if err != nil {
		return "", "", err
	}
	next, err := ask("New password")
	if err != nil {
		return "", "", err
	}
	again, err := ask("New password again")
	if err != nil {
		return "", "", err
	}
	switch {
	case strings.TrimSpace(current) == "" || strings.TrimSpace(next) == "":
		return "", "", usageErr("passwd: a password must not be empty; nothing was changed")
	case next != again:
		return "", "", usageErr("passwd: the two new passwords differ; nothing was changed")
	}
	return current, next, nil
}
