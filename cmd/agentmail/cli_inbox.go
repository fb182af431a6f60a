package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail inbox`: see cli.NewInboxCommand.
func init() { rootCmd.AddCommand(cli.NewInboxCommand(cliEnv)) }
