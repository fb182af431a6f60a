package main

import "github.com/agentmail/agentmail/internal/cli"

// `agentmail reservations`: see cli.NewReservationsCommand.
func init() { rootCmd.AddCommand(cli.NewReservationsCommand(cliEnv)) }
