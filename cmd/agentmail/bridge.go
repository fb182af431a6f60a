package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/bridge"
	"github.com/agentmail/agentmail/internal/bridge/acp"
	"github.com/agentmail/agentmail/internal/bridge/claude"
	"github.com/agentmail/agentmail/internal/bridge/demo"
	"github.com/agentmail/agentmail/internal/bridge/opencode"
	"github.com/agentmail/agentmail/internal/bridge/pi"
)

// bridgePlatform is one entry of the platform registry: the executable's
// command name (looked up in PATH unless AGENTMAIL_<NAME>_BIN is set; ""
// when the platform needs none) and the adapter constructor, which reads
// its own settings through getenv (a bad one is a usage error, exit 2).
type bridgePlatform struct {
	command string
	adapter func(getenv func(string) string) (bridge.Adapter, error)
	// attachEnv names the variable that points the adapter at an already
	// running platform server; when it is set no executable is needed.
	attachEnv string
	// keyFile, when set, is the agent key file's name in ~/.agentmail
	// instead of agent.key: the demo keeps its key apart, so that a real
	// platform connected later does not connect as the demo agent.
	keyFile string
	// inProcess: the platform runs inside the bridge and starts no
	// program (the demo), so there is nothing to confine.
	inProcess bool
}

// bridgePlatforms maps --platform names to adapters. Adding a platform is
// one line here.
var bridgePlatforms = map[string]bridgePlatform{
	claude.Name:   {command: "claude", adapter: func(func(string) string) (bridge.Adapter, error) { return claude.New(claude.Options{}), nil }},
	opencode.Name: {command: "opencode", attachEnv: opencode.EnvURL, adapter: func(func(string) string) (bridge.Adapter, error) { return opencode.New(opencode.Options{}), nil }},
	pi.Name:       {command: "pi", adapter: func(func(string) string) (bridge.Adapter, error) { return pi.New(pi.Options{}), nil }},
	acp.Name:      {adapter: acpAdapter},
	demo.Name:     {adapter: demoAdapter, keyFile: "demo.key", inProcess: true},
}

// demoAdapter builds the demo platform; its writes never reach what a
// confined platform may not read (bridge.PlatformHidden).
func demoAdapter(getenv func(string) string) (bridge.Adapter, error) {
	home, _ := os.UserHomeDir()
	return demo.New(demo.Options{Hidden: bridge.PlatformHidden(getenv, home)}), nil
}

// acpAdapter builds the ACP adapter from --acp-command, else AGENTMAIL_ACP_COMMAND,
// --acp-process, else AGENTMAIL_ACP_PROCESS, and AGENTMAIL_ACP_AUTH_METHOD.
func acpAdapter(getenv func(string) string) (bridge.Adapter, error) {
	line := bridgeFlags.acpCommand
	if strings.TrimSpace(line) == "" {
		line = getenv(acp.EnvCommand)
	}
	argv, err := acp.ParseCommand(line)
	if err != nil {
		return nil, err
	}
	modeText := bridgeFlags.acpProcess
	if strings.TrimSpace(modeText) == "" {
		modeText = getenv(acp.EnvProcess)
	}
	mode, err := acp.ParseProcessMode(modeText)
	if err != nil {
		return nil, err
	}
	return acp.New(acp.Options{Command: argv, Process: mode, AuthMethod: strings.TrimSpace(getenv(acp.EnvAuthMethod))}), nil
}

// platformNames lists the registered platforms, sorted.
func platformNames() []string {
	names := make([]string, 0, len(bridgePlatforms))
	for n := range bridgePlatforms {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var bridgeFlags struct {
	platform   string
	acpCommand string
	acpProcess string
	maxTurns   int
	logLevel   string
}

// bridgeCmd is `agentmail bridge --platform NAME`: the bridge core of seed
// 000 driving one agent platform.
var bridgeCmd = &cobra.Command{
	Use:   "bridge --platform NAME",
	Short: "Connect an agent platform to the gateway: each mail becomes a turn, the answer goes back",
	Long: `Run the bridge for one agent platform. A mail to this agent starts one turn of the
platform in the mail's directory; the platform's final text goes back as the reply;
the platform's own permission questions go to a person by mail.

--platform demo needs no model, no account and nothing installed: it answers
each mail itself (what it received, its directory, how to connect a real
platform) and writes a file a line "write NAME: TEXT" asks for, after a
person approved the permission request. It keeps its key in
~/.agentmail/demo.key, apart from the other platforms' agent.key.

Environment:
  AGENTMAIL_GATEWAY_URL      gateway address (default http://127.0.0.1:8180)
  AGENTMAIL_AGENT_NAME       the agent's name (default: the name the key was registered for)
  AGENTMAIL_AGENT_KEY        the agent key; else ~/.agentmail/agent.key; else one is
                             generated, saved there (mode 0600) and printed once with
                             the way to register it; the bridge waits for a key of the
                             file that is not registered yet
  AGENTMAIL_FALLBACK_DIR     working directory used when a mail's directory does not
                             exist (never created); unset = such mails get a failure report
  AGENTMAIL_PERMISSION_MODE  plan, workspace (default) or full
  AGENTMAIL_SANDBOX          auto (default): the platform runs in a bubblewrap
                             sandbox that hides the key file, ~/.agentmail,
                             ~/.config/agentmail and AGENTMAIL_DATA_DIR and
                             shows it only its own processes; off: unconfined
  AGENTMAIL_DATA_DIR         the gateway's data directory, hidden from the
                             platform when set
  AGENTMAIL_<PLATFORM>_BIN   the platform executable (else found in PATH), e.g.
                             AGENTMAIL_CLAUDE_BIN
                             (AGENTMAIL_OPENCODE_BIN, AGENTMAIL_PI_BIN)
  AGENTMAIL_ACP_COMMAND      with --platform acp and no --acp-command: the ACP
                             agent's command line, e.g. 'opencode acp', 'qwen --acp'
  AGENTMAIL_ACP_PROCESS      with --platform acp and no --acp-process: turn (default)
                             or session
  AGENTMAIL_ACP_AUTH_METHOD  with --platform acp: the agent's login method id sent
                             with authenticate when the agent asks for a login
The platform process inherits this environment (ANTHROPIC_BASE_URL and the like).

Exit codes: 0 stopped by a signal, 1 error, 2 usage (unknown --platform, bad
flag or argument).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		// Issue 12, point 9: a key given in the environment would stay in
		// /proc/<pid>/environ for the bridge's whole life. The bridge
		// re-executes itself (same pid) without it and reads it from a
		// pipe; this returns only when there is nothing to do or it failed.
		reexecErr := bridge.ReexecWithoutKey(os.Args, os.Environ())
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runBridge(ctx, os.Getenv, reexecErr)
	},
}

func init() {
	bridgeCmd.Flags().StringVar(&bridgeFlags.platform, "platform", "", "agent platform: "+strings.Join(platformNames(), ", "))
	// Shell completion offers the platform names (issue 18 point 13).
	_ = bridgeCmd.RegisterFlagCompletionFunc("platform", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return platformNames(), cobra.ShellCompDirectiveNoFileComp
	})
	bridgeCmd.Flags().StringVar(&bridgeFlags.acpCommand, "acp-command", "", "with --platform acp: the ACP agent's command line, e.g. 'opencode acp' (else "+acp.EnvCommand+")")
	bridgeCmd.Flags().StringVar(&bridgeFlags.acpProcess, "acp-process", "", "with --platform acp: turn (a new agent process per turn, the default) or session (one per mail session, kept between its turns; Gemini CLI needs it) (else "+acp.EnvProcess+")")
	bridgeCmd.Flags().IntVar(&bridgeFlags.maxTurns, "max-turns", bridge.DefaultMaxTurns, "turns running at once (one per directory at a time)")
	bridgeCmd.Flags().StringVar(&bridgeFlags.logLevel, "log-level", "info", "debug, info, warn or error")
	rootCmd.AddCommand(bridgeCmd)
}

// runBridge reads the configuration (issue 4 item 6), resolves the key
// (B-1.1), finds the platform's sandbox and runs the bridge until ctx ends.
// reexecErr is why the bridge could not drop the key from its environment
// (nil when it did or had none there).
func runBridge(ctx context.Context, getenv func(string) string, reexecErr error) error {
	lvl := slog.LevelInfo
	if err := lvl.UnmarshalText([]byte(bridgeFlags.logLevel)); err != nil {
		return usagef("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	p, ok := bridgePlatforms[bridgeFlags.platform]
	if !ok {
		return usagef("--platform %q: use one of %s", bridgeFlags.platform, strings.Join(platformNames(), ", ")) // exit 2
	}
	adapter, err := p.adapter(getenv)
	if err != nil {
		return usagef("--platform %s: %w", bridgeFlags.platform, err) // exit 2
	}
	settings, err := bridge.LoadSettings(getenv)
	if err != nil {
		return err
	}
	if reexecErr != nil {
		log.Warn("the agent key stays readable in this process's environment (/proc/<pid>/environ); put it into ~/.agentmail/agent.key instead of AGENTMAIL_AGENT_KEY", "err", reexecErr)
	}
	if k, err := bridge.KeyFromPipe(getenv); err != nil {
		return err
	} else if k != "" {
		settings.AgentKey = k // given as AGENTMAIL_AGENT_KEY, passed on by the re-execution
	}
	// The platform is found before any key is generated or printed: a
	// missing executable ends the bridge before it asks for a registration.
	bin := ""
	if p.command != "" && (p.attachEnv == "" || getenv(p.attachEnv) == "") {
		if bin, err = bridge.FindPlatformBin(bridgeFlags.platform, p.command, getenv); err != nil {
			return err
		}
	}
	if a, ok := adapter.(interface{ FindCommand() (string, error) }); ok { // --platform acp
		if _, err := a.FindCommand(); err != nil {
			return err
		}
	}
	home, _ := os.UserHomeDir()
	keyFile := bridge.KeyFile(home)
	if p.keyFile != "" && home != "" {
		keyFile = filepath.Join(filepath.Dir(keyFile), p.keyFile)
	}
	key, source, err := bridge.ResolveAgentKeyFile(settings.AgentKey, keyFile)
	if err != nil {
		return err
	}
	settings.AgentKey = key
	// A key read from the file that the gateway refuses is most often one
	// a first start made and the person stopped the bridge before it was
	// registered: the bridge says again how to register it (without the
	// key, B-1.1) and waits for it, as on the first start. The gateway's
	// 401 does not tell an unregistered key from a revoked or expired one,
	// so the text names both.
	var onKeyRefused func()
	if source == bridge.KeyFromFile {
		settings.WaitForKey = true
		name := settings.AgentName
		if name == "" {
			name = bridgeFlags.platform // the name a first start registers its key for
		}
		onKeyRefused = func() {
			fmt.Fprintf(os.Stderr, "\n  The agent key in %s is not registered with %s (or it was revoked, or it expired).\n\n  %s\n\n"+
				"  The bridge waits and connects by itself once the key is registered. If the key was revoked or expired,\n"+
				"  make a new one instead: stop the bridge, delete %s and start the bridge again.\n\n",
				keyFile, settings.GatewayURL, bridge.RegistrationHintKeyFile(settings.GatewayURL, name, keyFile), keyFile)
		}
	}
	if source == bridge.KeyFromGenerated {
		// The name the pasted command registers, and the wait for it (issue 18 point 4).
		if settings.AgentName == "" {
			settings.AgentName = bridgeFlags.platform
		}
		settings.WaitForKey = true
		// B-1.1: printed once, when it is made; never again.
		fmt.Fprintf(os.Stderr, "\n  Generated a new agent key and saved it to %s:\n\n      %s\n\n  %s\n\n  The bridge waits and connects by itself once the key is registered.\n\n",
			keyFile, key, bridge.RegistrationHint(settings.GatewayURL, settings.AgentName, keyFile))
	}
	mcp, err := bridge.MCPCommand()
	if err != nil {
		return err
	}
	// I-5: whether the platform's own shell tool is confined is said once.
	var sb bridge.Sandbox // an interface: stays nil without a sandbox
	if p.inProcess {
		log.Info("the " + bridgeFlags.platform + " platform runs inside the bridge and starts no program; it writes only files a person approved, inside the mail's directory")
	} else if p.attachEnv != "" && getenv(p.attachEnv) != "" {
		log.Warn("the platform server was started by someone else (" + p.attachEnv + "), so the bridge cannot confine it: its own shell tool can read everything its user can")
	} else if box, why := findPlatformSandbox(ctx, getenv, home); box == nil {
		log.Warn("the platform runs without a sandbox: its own shell tool can read the agent key file and everything else this user can", "reason", why)
	} else {
		sb = box
		log.Info("the platform runs in a bubblewrap sandbox: it sees neither the bridge's process nor the hidden files (the agent key, the stored logins, and the gateway's data when AGENTMAIL_DATA_DIR is set)", "hidden", strings.Join(box.Hidden, ":"))
	}
	c := client.New(settings.GatewayURL, client.WithToken(key), client.WithUserAgent("agentmail-bridge/"+bridgeFlags.platform))
	b, err := bridge.New(bridge.Config{
		Adapter:    adapter,
		Version:    buildVersion(),
		Gateway:    c,
		Subscribe:  streamSubscriber(c),
		Settings:   settings,
		Bin:        bin,
		MCPCommand: mcp,
		Sandbox:    sb,
		MaxTurns:   bridgeFlags.maxTurns,
		Logger:     log,

		OnKeyRefused: onKeyRefused,
	})
	if err != nil {
		return err
	}
	return b.Run(ctx)
}

// streamSubscriber opens the agent event stream through the client. The
// client does not reconnect by itself: the core does, with Last-Event-ID
// (D-7.2), and sends none on the first connection (N-11).
func streamSubscriber(c *client.Client) bridge.SubscribeFunc {
	return func(ctx context.Context, lastEventID int64) (bridge.EventStream, error) {
		s, err := c.Stream(ctx, client.StreamOptions{LastEventID: lastEventID})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}
