package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail deny`: see cli.NewDenyCommand.
func init() { rootCmd.AddCommand(cli.NewDenyCommand(cliEnv)) }
