package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail search`: see cli.NewSearchCommand.
func init() { rootCmd.AddCommand(cli.NewSearchCommand(cliEnv)) }
