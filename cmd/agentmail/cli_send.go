package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail send`: see cli.NewSendCommand.
func init() { rootCmd.AddCommand(cli.NewSendCommand(cliEnv)) }
