package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail export`: see cli.NewExportCommand.
func init() { rootCmd.AddCommand(cli.NewExportCommand(cliEnv)) }
