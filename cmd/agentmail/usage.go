package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// exitUsage is the exit status of a usage error (wrong command, flag or
// argument; nothing was done), the same as the people's commands document
// (internal/cli ExitUsage).
const exitUsage = 2

// usageError is a usage error: main exits with exitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// ExitCode answers exitUsage.
func (e usageError) ExitCode() int { return exitUsage }

// usagef builds a usage error.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// asUsage makes an error that chooses no exit status a usage error; one
// that does (the people's commands' own) keeps its status.
func asUsage(err error) error {
	var ec exitCoder
	if err == nil || errors.As(err, &ec) {
		return err
	}
	return usageError{err}
}

// markUsageErrors makes every flag parsing error and every positional
// argument error of cmd and its subcommands a usage error (exit 2), so
// `agentmail bridge --bogus` and `agentmail serve extra` exit like
// `agentmail send --bogus`. Commands that set their own flag error function
// keep it.
func markUsageErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	var mark func(c *cobra.Command)
	mark = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error { return asUsage(plainArgsError(cmd, a, args(cmd, a))) }
		}
		for _, sub := range c.Commands() {
			mark(sub)
		}
	}
	mark(cmd)
}

// cobra's own argument errors, which read like a program's ("accepts 1
// arg(s), received 0"; an argument to a command without subcommands is an
// "unknown command").
var (
	cobraArgCount   = regexp.MustCompile(`^(?:accepts|requires at least|requires at most|accepts between) .*arg\(s\)`)
	cobraUnknownCmd = regexp.MustCompile(`^unknown command "`)
)

// plainArgsError says a wrong argument count in plain words with the help
// to read (issue 18): "agentmail serve takes no arguments, got \"x\"".
// Other errors are answered as they are.
func plainArgsError(cmd *cobra.Command, args []string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case cobraUnknownCmd.MatchString(msg) && !cmd.HasSubCommands():
		return fmt.Errorf("%s takes no arguments, got %q (see %s --help)", subName(cmd), args, cmd.CommandPath())
	case cobraArgCount.MatchString(msg):
		return fmt.Errorf("%s: wrong number of arguments (%d given); see %s --help for what it takes", subName(cmd), len(args), cmd.CommandPath())
	}
	return err
}

// subName is the command path without the program's name ("completion fish").
func subName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

var markOnce sync.Once

// execute runs the root command with args and answers the exit status main
// uses and the error: an error of the root command itself (an unknown
// subcommand, a bad flag of agentmail) is a usage error too, since the root
// does nothing else.
func execute(args []string) (int, error) {
	markOnce.Do(func() {
		rootCmd.InitDefaultCompletionCmd(args...)
		describeCompletion(rootCmd)
		markUsageErrors(rootCmd)
	})
	rootCmd.SetArgs(args)
	cmd, err := rootCmd.ExecuteC()
	if err == nil {
		return 0, nil
	}
	if cmd == rootCmd {
		if msg := err.Error(); cobraUnknownCmd.MatchString(msg) && !strings.Contains(msg, "--help") {
			first, rest, _ := strings.Cut(strings.TrimSpace(msg), "\n")
			err = fmt.Errorf("%s (see agentmail --help for the commands)%s", first, strings.TrimRight("\n"+rest, "\n"))
		}
		err = asUsage(err)
	}
	return exitCode(err), err
}

// completionExitCodes is the exit-code table of `agentmail completion`.
const completionExitCodes = "\n\nExit codes: 0 the script was printed, 2 usage (unknown shell, bad flag)."

// describeCompletion adds the exit-code table to cobra's completion command
// and its shells (issue 18 point 9: every command's help has its table).
func describeCompletion(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Long += completionExitCodes
		for _, sh := range c.Commands() {
			sh.Long += completionExitCodes
		}
	}
}
