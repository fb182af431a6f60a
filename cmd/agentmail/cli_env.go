package main

import "github.com/agentmail/agentmail/internal/cli"

// cliEnv is the outside world of the people's commands (login, send, inbox,
// show, tree, approve, deny, watch, keys, logout): the process's standard
// streams and environment. Shell completion is cobra's own `completion`
// command.
var cliEnv = cli.DefaultEnv()
