package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail show`: see cli.NewShowCommand.
func init() { rootCmd.AddCommand(cli.NewShowCommand(cliEnv)) }
