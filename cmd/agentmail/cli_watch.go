package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail watch`: see cli.NewWatchCommand.
func init() { rootCmd.AddCommand(cli.NewWatchCommand(cliEnv)) }
