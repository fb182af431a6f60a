package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail acks`: see cli.NewAcksCommand.
func init() { rootCmd.AddCommand(cli.NewAcksCommand(cliEnv)) }
