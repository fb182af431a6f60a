package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail login`: see cli.NewLoginCommand.
func init() { rootCmd.AddCommand(cli.NewLoginCommand(cliEnv)) }
