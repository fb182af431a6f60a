package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail keys`: see cli.NewKeysCommand.
func init() { rootCmd.AddCommand(cli.NewKeysCommand(cliEnv)) }
