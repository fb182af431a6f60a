package main

import "github.com/agentmail/agentmail/internal/cli"

// cliEnv is the outside world of the people's commands: the process's
// standard streams and environment. Shell completion is cobra's own
// `completion` command.
var cliEnv = cli.DefaultEnv()

// The people's commands (login, send, inbox, show, search, runs, stop, …)
// come from one list, cli.Commands, so that a command written there is a
// command of the binary.
func init() { rootCmd.AddCommand(cli.Commands(cliEnv)...) }
