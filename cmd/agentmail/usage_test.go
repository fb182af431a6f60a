package main

import (
	"strings"
	"testing"
)

// Usage errors of every command exit 2, like the people's commands
// document: an unknown platform, a bad flag value, an unknown flag, a stray
// argument, an unknown command. Other failures keep their own status.
func TestUsageErrorsExit2(t *testing.T) {
	t.Setenv("AGENTMAIL_ACP_COMMAND", "")
	t.Setenv("AGENTMAIL_ACP_PROCESS", "")
	cases := []struct {
		args []string
		want string // part of the message
	}{
		{[]string{"bridge", "--platform", "nosuch"}, `--platform "nosuch": use one of acp, claude, demo, opencode, pi`},
		{[]string{"bridge", "--platform", "claude", "--log-level", "loud"}, "--log-level"},
		{[]string{"bridge", "--platform", "acp", "--log-level", "info"}, "--acp-command '<agent command line>' or set AGENTMAIL_ACP_COMMAND"},
		{[]string{"bridge", "--platform", "acp", "--log-level", "info", "--acp-command", "opencode 'acp"}, "the ACP command"},
		{[]string{"bridge", "--platform", "acp", "--log-level", "info", "--acp-command", "gemini --acp", "--acp-process", "forever"}, `the ACP process mode "forever"`},
		{[]string{"bridge", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"bridge", "--max-turns", "many"}, "--max-turns"},
		{[]string{"bridge", "stray"}, "stray"},
		{[]string{"serve", "stray"}, "stray"},
		{[]string{"serve", "--log-level", "loud"}, "--log-level"},
		{[]string{"mcp", "--bogus"}, "unknown flag"},
		{[]string{"nosuch"}, `unknown command "nosuch"`},
		{[]string{"--bogus"}, "unknown flag"},
		{[]string{"send", "--bogus"}, "there is no option --bogus"},
		{[]string{"completion", "bash", "stray"}, `completion bash takes no arguments, got ["stray"]`},
		{[]string{"keys", "frobnicate"}, "unknown subcommand"},
	}
	for _, c := range cases {
		code, err := execute(c.args)
		if code != exitUsage || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("agentmail %s: exit %d, %v; want exit %d mentioning %q", strings.Join(c.args, " "), code, err, exitUsage, c.want)
		}
	}
	bridgeFlags.platform, bridgeFlags.logLevel, bridgeFlags.acpCommand, bridgeFlags.acpProcess = "", "info", "", ""
	serveFlags.logLevel = "info"
}
