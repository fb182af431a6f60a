package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail guard`: see cli.NewGuardCommand.
func init() { rootCmd.AddCommand(cli.NewGuardCommand(cliEnv)) }
