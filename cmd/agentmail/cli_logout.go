package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail logout`: see cli.NewLogoutCommand.
func init() { rootCmd.AddCommand(cli.NewLogoutCommand(cliEnv)) }
