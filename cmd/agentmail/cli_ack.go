package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail ack`: see cli.NewAckCommand.
func init() { rootCmd.AddCommand(cli.NewAckCommand(cliEnv)) }
