package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail passwd`: see cli.NewPasswdCommand.
func init() { rootCmd.AddCommand(cli.NewPasswdCommand(cliEnv)) }
