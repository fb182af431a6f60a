// Package cli is the command-line client for people: `agentmail login`,
// `send`, `inbox`, `show`, `tree`, `approve`, `deny`, `watch`, `keys`,
// `logout`, `ack`, `acks`, `reservations` and `guard`. Every command talks to the gateway through the public Go client
// (package client) with the user key that `agentmail login` stored, exactly
// as any third-party program could.
//
// Output is human-readable by default; --json prints the API's own JSON
// shapes for scripts. Exit codes are stable (see the Exit* constants), and
// an error prints the gateway's message, the field at fault and its
// suggestion.
package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/agentmail/agentmail/client"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit codes of the people's commands; scripts may rely on them.
const (
	ExitOK       = 0 // success
	ExitError    = 1 // any other failure: network, server fault, bad answer
	ExitUsage    = 2 // wrong flags or arguments; nothing was sent
	ExitNotFound = 3 // the gateway answered 404 (unknown id, alias or name)
	ExitConflict = 4 // the gateway answered 409 (e.g. already decided)
	ExitAuth     = 5 // not logged in, or the gateway answered 401/403
)

// exitCodesHelp is appended to every command's long help.
const exitCodesHelp = `
Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 conflict,
5 not logged in / key refused (401, 403).`

// Error is a command failure with the exit status it maps to. The cmd
// package's main prints Error() and exits with ExitCode().
type Error struct {
	Code int    // one of the Exit* constants
	Msg  string // what failed, e.g. "send", or a format for args; may be empty
	Err  error  // the cause; may be nil when Msg says it all

	args []any // when set, Msg is a format for them
	lang lang  // the language Error() writes in; "" English
}

// errorf is an Error whose message is format with args, written in the
// person's language when the command ends.
func errorf(code int, cause error, format string, args ...any) *Error {
	if args == nil {
		args = []any{}
	}
	return &Error{Code: code, Msg: format, Err: cause, args: args}
}

// Error gives "<msg>: <cause>" in the person's language. A gateway error
// shows the person's words for what is wrong and what to do (apiwords.go):
// never the API's code, field names or endpoints.
func (e *Error) Error() string {
	l := e.lang
	if l == "" {
		l = langEN
	}
	msg := l.S(e.Msg)
	if e.args != nil {
		msg = l.F(e.Msg, e.args...)
	}
	var cause string
	if api := client.AsAPIError(e.Err); api != nil {
		cause = apiText(l, api)
	} else if ue := (*url.Error)(nil); errors.As(e.Err, &ue) {
		cause = unreachable(l, ue)
	} else if e.Err != nil {
		cause = e.Err.Error()
	}
	switch {
	case msg == "":
		return cause
	case cause == "":
		return msg
	}
	return msg + l.S(": ") + cause
}

// unreachable says which gateway could not be reached, why in the
// network's own words, and what to check (issue 18 point 7).
func unreachable(l lang, ue *url.Error) string {
	base := ue.URL
	if u, err := url.Parse(ue.URL); err == nil && u.Host != "" {
		base = u.Scheme + "://" + u.Host
	}
	why := ue.Err.Error()
	if op := (*net.OpError)(nil); errors.As(ue.Err, &op) && op.Err != nil {
		why = op.Err.Error()
	}
	return l.F("cannot reach the gateway at %s (%s)\n  check: is the gateway running there (agentmail serve)? "+
		"Is this its address? Set AGENTMAIL_GATEWAY_URL, or run `agentmail login` with the right --url", base, why)
}

// ExitCode returns the process exit status for this error.
func (e *Error) ExitCode() int { return e.Code }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode maps any error returned by a command to its exit status: the
// Code of an *Error, ExitOK for nil, ExitError otherwise.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitError
}

// usageErr is a usage error (exit 2): nothing was sent.
func usageErr(format string, args ...any) error {
	return errorf(ExitUsage, nil, format, args...)
}

// apiErr wraps a failure of a gateway call made for what, choosing the exit
// status from the answer's HTTP status.
func apiErr(what string, err error) error {
	if err == nil {
		return nil
	}
	code := ExitError
	switch client.StatusOf(err) {
	case http.StatusNotFound:
		code = ExitNotFound
	case http.StatusConflict:
		code = ExitConflict
	case http.StatusUnauthorized, http.StatusForbidden:
		code = ExitAuth
	}
	return &Error{Code: code, Msg: what, Err: err}
}

// Env is what the commands use of the outside world; tests replace it.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable (AGENTMAIL_CONFIG,
	// AGENTMAIL_GATEWAY_URL or the old AGENTMAIL_URL, AGENTMAIL_USER_KEY).
	Getenv func(string) string
	// Hostname names this machine in the label of the key login creates.
	Hostname func() (string, error)
	// UserConfigDir is the base of the default config path.
	UserConfigDir func() (string, error)
	// StdinIsTerminal tells whether Stdin is an interactive terminal.
	StdinIsTerminal func() bool
	// ReadPassword reads a password from the terminal without echo.
	ReadPassword func() (string, error)
	// HTTPClient, when set, carries every request (tests).
	HTTPClient *http.Client

	once       sync.Once
	oldURLNote sync.Once // the note on the old AGENTMAIL_URL, once per run
	language   lang      // the person's language; "" until lang() is asked
	reader     *bufio.Reader
}

// DefaultEnv returns the environment of the running process.
func DefaultEnv() *Env {
	return &Env{
		Stdin:         os.Stdin,
		Stdout:        os.Stdout,
		Stderr:        os.Stderr,
		Getenv:        os.Getenv,
		Hostname:      os.Hostname,
		UserConfigDir: os.UserConfigDir,
		StdinIsTerminal: func() bool {
			return term.IsTerminal(int(os.Stdin.Fd()))
		},
		ReadPassword: func() (string, error) {
			b, err := term.ReadPassword(int(os.Stdin.Fd()))
			return string(b), err
		},
	}
}

// in returns the one buffered reader over Stdin shared by prompts and body
// reading, so no input is lost between them.
func (e *Env) in() *bufio.Reader {
	e.once.Do(func() { e.reader = bufio.NewReader(e.Stdin) })
	return e.reader
}

func (e *Env) isTerminal() bool { return e.StdinIsTerminal != nil && e.StdinIsTerminal() }

// readLine reads one line of Stdin without its line end; io.EOF only when
// nothing at all was left.
func (e *Env) readLine() (string, error) {
	line, err := e.in().ReadString('\n')
	if err == io.EOF && line != "" {
		err = nil
	}
	return strings.TrimRight(line, "\r\n"), err
}

// printJSON writes v as indented JSON on Stdout.
func (e *Env) printJSON(v any) error {
	enc := json.NewEncoder(e.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Commands returns every people's command, ready to be added to the root
// command; cmd/agentmail registers exactly this list, so a command missing
// here is missing from the binary.
func Commands(env *Env) []*cobra.Command {
	return []*cobra.Command{
		NewLoginCommand(env), NewLogoutCommand(env), NewSendCommand(env), NewInboxCommand(env),
		NewShowCommand(env), NewTreeCommand(env), NewApproveCommand(env), NewDenyCommand(env),
		NewWatchCommand(env), NewKeysCommand(env),
		NewAckCommand(env), NewAcksCommand(env), NewReservationsCommand(env), NewGuardCommand(env), // coordination.go, guard.go
		NewRunsCommand(env), NewStopCommand(env), // runs.go
		NewSearchCommand(env), NewExportCommand(env), NewPasswdCommand(env), // search.go, export.go, passwd.go
	}
}

// setup gives a command the shared conventions: flag and argument errors
// are usage errors (exit 2) in plain words, usage is not printed on a
// gateway error, exit codes are in the help, and every error the command
// returns is written in the person's language.
func (e *Env) setup(cmd *cobra.Command) *cobra.Command {
	cmd.Long = strings.TrimSpace(cmd.Long) + "\n" + exitCodesHelp
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return e.localize(&Error{Code: ExitUsage, Msg: cmdName(c), Err: flagError{e.lang(), c, err}})
	})
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error { return e.localize(args(c, a)) }
	}
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, a []string) error { return e.localize(run(c, a)) }
	}
	cmd.SilenceUsage = true
	return cmd
}

// localize makes err write itself in the person's language: an *Error
// gets the language; any other error becomes one (exit 1).
func (e *Env) localize(err error) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if !errors.As(err, &ce) {
		ce = &Error{Code: ExitError, Err: err}
		err = ce
	}
	ce.lang = e.lang()
	return err
}

// flagError is a flag parsing error of pflag, in plain words with the
// command's help to read.
type flagError struct {
	l   lang
	cmd *cobra.Command
	err error
}

func (f flagError) Error() string {
	msg := f.err.Error()
	var flag string
	switch {
	case scanFlag(msg, "unknown flag: %s", &flag), scanFlag(msg, "unknown shorthand flag: %s", &flag):
		msg = f.l.F("there is no option %s", flag)
	case scanFlag(msg, "flag needs an argument: %s", &flag):
		msg = f.l.F("the option %s needs a value", strings.TrimSuffix(strings.Trim(flag, "'"), "'"))
	}
	return msg + f.l.F(" (see %s --help)", f.cmd.CommandPath())
}

func (f flagError) Unwrap() error { return f.err }

// scanFlag reads the one word of pflag's message msg of the form format.
func scanFlag(msg, format string, word *string) bool {
	n, _ := fmt.Sscanf(msg, format, word)
	return n == 1
}

// exactArgs is cobra.ExactArgs returning a usage error (exit 2) in plain
// words: what the command wants (names, e.g. "one mail id").
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s: give %s (you gave %d); see %s --help", cmdName(cmd), word(names), len(args), cmd.CommandPath())
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs returning a usage error in plain words.
func minArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr("%s: give %s; see %s --help", cmdName(cmd), word(names), cmd.CommandPath())
		}
		return nil
	}
}

// word is a text to be translated when the message it goes in is written.
type word string

// noArgs refuses positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) != 0 {
		return usageErr("%s takes no arguments, got %q (see %s --help)", cmdName(cmd), args, cmd.CommandPath())
	}
	return nil
}

// cmdName is the command path without the program name ("keys create").
func cmdName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// newClient returns a client for the stored login (or the AGENTMAIL_GATEWAY_URL and
// AGENTMAIL_USER_KEY variables), or an ExitAuth error telling to log in.
func (e *Env) newClient() (*client.Client, *Config, error) {
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	opts := []client.Option{client.WithToken(cfg.Token), client.WithUserAgent("agentmail-cli/1")}
	if e.HTTPClient != nil {
		opts = append(opts, client.WithHTTPClient(e.HTTPClient))
	}
	c := client.New(cfg.URL, opts...)
	e.learnLanguage(c, cfg)
	return c, cfg, nil
}
