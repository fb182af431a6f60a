package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail approve`: see cli.NewApproveCommand.
func init() { rootCmd.AddCommand(cli.NewApproveCommand(cliEnv)) }
