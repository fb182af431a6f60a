package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/spf13/cobra"
)

// The pre-commit guard (issue 21 item 1): `agentmail guard install` writes
// a git pre-commit hook that runs `agentmail guard check`, which asks the
// gateway whether another agent holds one of the staged paths exclusively
// and refuses the commit if so. Reservations are advisory: the hook can be
// skipped with `git commit --no-verify` or AGENTMAIL_GUARD=off, and a
// gateway that cannot be reached lets the commit through with a warning.

// guardMarker is in every hook the guard writes, so that install knows its
// own hook from someone else's.
const guardMarker = "agentmail-guard"

// EnvGuard set to "off" makes `agentmail guard check` allow every commit.
const EnvGuard = "AGENTMAIL_GUARD"

// guardTimeout bounds the gateway call of a check.
const guardTimeout = 10 * time.Second

// NewGuardCommand returns `agentmail guard` with its subcommands install
// and check.
func NewGuardCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "guard",
		Short: "Refuse git commits that touch files another agent has reserved",
		Long: `Protect a git repository against commits that touch paths another agent holds
exclusively (file reservations, see reserve_paths).

  agentmail guard install            write the pre-commit hook into this repository
  agentmail guard check              what the hook runs: check the staged paths

The hook identifies who commits by AGENTMAIL_TURN_TOKEN (a command run inside an
agent's turn), else the agent key (AGENTMAIL_AGENT_KEY, AGENTMAIL_AGENT_KEY_FILE or
~/.agentmail/agent.key, with AGENTMAIL_GATEWAY_URL), else your user key
(agentmail login). Your own reservations never block you.

To commit anyway: git commit --no-verify, or AGENTMAIL_GUARD=off git commit ...
When the gateway cannot be reached the commit goes ahead with a warning.`,
		Args: noArgs,
	}
	cmd.AddCommand(newGuardInstallCommand(env), newGuardCheckCommand(env))
	return env.setup(cmd)
}

func newGuardInstallCommand(env *Env) *cobra.Command {
	var repo string
	var force bool
	cmd := &cobra.Command{
		Use:   "install [--repo DIR] [--force]",
		Short: "Write the reservation pre-commit hook into a git repository",
		Long: `Write a git pre-commit hook into the repository (the current directory's by
default) that runs "agentmail guard check" before every commit. An existing
pre-commit hook that is not the guard's is kept unless --force replaces it
(exit 4 then).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			hooks, err := gitOutput(repo, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
			if err != nil {
				if repo != "" {
					return usageErr("guard install: %s is not in a git repository; give --repo the directory of your repository", repo)
				}
				return usageErr("guard install: this directory is not in a git repository; run it in your repository's directory, or give --repo DIR")
			}
			path := filepath.Join(hooks, "pre-commit")
			if old, err := os.ReadFile(path); err == nil && !bytes.Contains(old, []byte(guardMarker)) && !force {
				return errorf(ExitConflict, nil, "guard install: %s already exists and is not the guard's; call agentmail guard check from it, or replace it with --force", path)
			}
			bin, err := os.Executable()
			if err != nil {
				bin = "agentmail"
			}
			if err := os.MkdirAll(hooks, 0o755); err != nil {
				return errorf(ExitError, err, "guard install: create %s", hooks)
			}
			tmp := path + ".agentmail-tmp"
			if err := os.WriteFile(tmp, []byte(guardHook(bin)), 0o755); err != nil {
				return errorf(ExitError, err, "guard install: write %s", path)
			}
			if err := os.Rename(tmp, path); err != nil {
				os.Remove(tmp)
				return errorf(ExitError, err, "guard install: write %s", path)
			}
			env.outf("Installed the reservation guard as %s.\n", path)
			env.outln("Commits touching files another agent holds exclusively are now refused; git commit --no-verify skips the check.")
			return nil
		},
	}
	cmd.Flags().StringVar(&repo, "repo", "", "the repository (default: the current directory's)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing pre-commit hook that is not the guard's")
	return env.setup(cmd)
}

// guardHook is the pre-commit hook that runs bin's guard check; without
// the binary it lets the commit through with a warning.
func guardHook(bin string) string {
	return `#!/bin/sh
# ` + guardMarker + `: written by "agentmail guard install".
# Refuses a commit that touches a path another agent holds exclusively.
# Skip it once with: git commit --no-verify   (or AGENTMAIL_GUARD=off git commit ...)
AGENTMAIL_BIN=` + shellQuote(bin) + `
if [ ! -x "$AGENTMAIL_BIN" ]; then
	AGENTMAIL_BIN=$(command -v agentmail 2>/dev/null)
fi
if [ -z "$AGENTMAIL_BIN" ]; then
	echo "agentmail guard: WARNING: the agentmail command was not found; this commit was not checked against file reservations." >&2
	exit 0
fi
exec "$AGENTMAIL_BIN" guard check
`
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// gitOutput runs git in dir ("" the current directory) and answers its
// trimmed output.
func gitOutput(dir string, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	var stderr bytes.Buffer
	c := exec.Command("git", args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// stagedPaths answers the paths a commit in repo would touch: added,
// changed and deleted files, both sides of a rename.
func stagedPaths(repo string) ([]string, error) {
	out, err := gitOutput(repo, "diff", "--cached", "--name-only", "--no-renames", "-z")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// guardChecker is who asks the gateway: a description for messages and
// the check call.
type guardChecker struct {
	who   string
	url   string
	check func(ctx context.Context, req client.ReservationCheckRequest) (*client.ReservationCheck, error)
}

// guardIdentity finds who commits: the turn token, else the agent key,
// else the user key; nil when there is none.
func (env *Env) guardIdentity() *guardChecker {
	gw := strings.TrimSpace(env.Getenv("AGENTMAIL_GATEWAY_URL"))
	if gw == "" {
		gw = "http://127.0.0.1:8180"
	}
	agent := func(who, token string) *guardChecker {
		opts := []client.Option{client.WithToken(token), client.WithUserAgent("agentmail-guard/1")}
		if env.HTTPClient != nil {
			opts = append(opts, client.WithHTTPClient(env.HTTPClient))
		}
		c := client.New(gw, opts...)
		return &guardChecker{who: who, url: gw, check: c.CheckReservations}
	}
	if t := strings.TrimSpace(env.Getenv("AGENTMAIL_TURN_TOKEN")); t != "" {
		return agent("this agent turn (AGENTMAIL_TURN_TOKEN)", t)
	}
	if k := strings.TrimSpace(env.Getenv("AGENTMAIL_AGENT_KEY")); k != "" {
		return agent("the agent key in AGENTMAIL_AGENT_KEY", k)
	}
	file := strings.TrimSpace(env.Getenv("AGENTMAIL_AGENT_KEY_FILE"))
	if file == "" {
		if home := env.Getenv("HOME"); home != "" {
			file = filepath.Join(home, ".agentmail", "agent.key")
		}
	}
	if file != "" {
		if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) != "" {
			return agent("the agent key in "+file, strings.TrimSpace(string(b)))
		}
	}
	c, cfg, err := env.newClient()
	if err != nil {
		return nil
	}
	who := env.lang().S("your user key")
	if cfg.Username != "" {
		who = env.lang().F("the user key of %s", cfg.Username)
	}
	return &guardChecker{who: who, url: cfg.URL, check: c.MeCheckReservations}
}

func newGuardCheckCommand(env *Env) *cobra.Command {
	var repo string
	cmd := &cobra.Command{
		Use:   "check [--repo DIR]",
		Short: "Check the staged paths against file reservations (the pre-commit hook)",
		Long: `Check the paths staged for the next commit against the reservations of other
agents. Exit 0 lets the commit go ahead (also, with a warning, when the gateway
cannot be reached or no AgentMail identity is found); exit 4 refuses it, naming
each holder, its reason and when its reservation ends.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.EqualFold(strings.TrimSpace(env.Getenv(EnvGuard)), "off") {
				env.errf("agentmail guard: skipped (AGENTMAIL_GUARD=off): reservations were not checked.\n")
				return nil
			}
			root, err := gitOutput(repo, "rev-parse", "--show-toplevel")
			if err != nil {
				return usageErr("guard check: this directory is not in a git repository; run it in your repository's directory")
			}
			paths, err := stagedPaths(root)
			if err != nil {
				return &Error{Code: ExitError, Msg: "guard check: list the staged files", Err: err}
			}
			if len(paths) == 0 {
				return nil
			}
			id := env.guardIdentity()
			if id == nil {
				env.errf("agentmail guard: WARNING: no AgentMail key found (AGENTMAIL_TURN_TOKEN, an agent key or agentmail login); this commit was NOT checked against file reservations.\n")
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), guardTimeout)
			defer cancel()
			var res *client.ReservationCheck
			for start := 0; start < len(paths); start += client.MaxCheckPaths {
				batch := paths[start:min(start+client.MaxCheckPaths, len(paths))]
				r, err := id.check(ctx, client.ReservationCheckRequest{Workspace: root, Paths: batch})
				if err != nil {
					return guardUnchecked(env, id, err)
				}
				if res == nil {
					res = r
				} else {
					res.Blocking = append(res.Blocking, r.Blocking...)
					res.Shared = append(res.Shared, r.Shared...)
				}
			}
			for _, c := range res.Shared {
				env.errf("agentmail guard: note: %s is also reserved (shared) by %s%s.\n", shownText(c.Path), shownText(c.Held.Holder), heldText(env.lang(), c.Held))
			}
			if len(res.Blocking) == 0 {
				return nil
			}
			env.errf("agentmail guard: commit refused: another agent holds these paths exclusively:\n")
			for _, c := range res.Blocking {
				env.errf("  %s  held by %s%s\n", shownText(c.Path), shownText(c.Held.Holder), heldText(env.lang(), c.Held))
			}
			env.errf("Agree with the holder (write to them), wait until the reservation ends, or commit anyway with\n")
			env.errf("  git commit --no-verify      (or AGENTMAIL_GUARD=off git commit ...)\n")
			return errorf(ExitConflict, nil, "guard check: %d staged path(s) reserved by other agents", len(res.Blocking))
		},
	}
	cmd.Flags().StringVar(&repo, "repo", "", "the repository (default: the current directory's)")
	return env.setup(cmd)
}

// heldText says why and until when a reservation holds.
func heldText(l lang, r client.Reservation) string {
	s := l.F(" (pattern %s", shownText(r.Path))
	if r.Reason != "" {
		s += l.F(", reason \"%s\"", shownText(r.Reason))
	}
	left := time.Until(r.ExpiresAt).Round(time.Minute)
	return s + l.F(", until %s, %s left)", timeText(r.ExpiresAt), strings.TrimSuffix(left.String(), "0s"))
}

// guardUnchecked lets the commit through with a warning when the gateway
// gave no answer about the reservations.
func guardUnchecked(env *Env, id *guardChecker, err error) error {
	why := err.Error()
	var api *client.APIError
	if errors.As(err, &api) {
		why = env.lang().F("the gateway answered %d: %s", api.Status, shownText(api.Message()))
	}
	env.errf("agentmail guard: WARNING: could not check file reservations with %s at %s (%s).\n", id.who, id.url, why)
	env.errf("agentmail guard: the commit goes ahead UNCHECKED; make sure no other agent is editing these files.\n")
	return nil
}
