package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail tree`: see cli.NewTreeCommand.
func init() { rootCmd.AddCommand(cli.NewTreeCommand(cliEnv)) }
