package bridge

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySource tells where ResolveAgentKey found the agent key.
type KeySource string

// Key sources, in the order B-1.1 tries them.
const (
	KeyFromEnv       KeySource = "env"       // AGENTMAIL_AGENT_KEY
	KeyFromFile      KeySource = "file"      // ~/.agentmail/agent.key
	KeyFromGenerated KeySource = "generated" // made now and saved to the file
)

// KeyFile is the agent key file under home: <home>/.agentmail/agent.key.
func KeyFile(home string) string { return filepath.Join(home, ".agentmail", "agent.key") }

// generatedKeyPrefix marks keys the bridge made itself.
const generatedKeyPrefix = "amk_"

// ResolveAgentKey implements B-1.1: the key from envKey when set, else the
// first line of <home>/.agentmail/agent.key, else a new random key (amk_ and
// 48 hex digits) written to that file with mode 0600 (its folder 0700). A
// generated key must be printed once by the caller together with the way to
// register it (RegistrationHint); it is never sent anywhere by this function.
// Errors name the file and what failed.
func ResolveAgentKey(envKey, home string) (string, KeySource, error) {
	if home == "" {
		return ResolveAgentKeyFile(envKey, "")
	}
	return ResolveAgentKeyFile(envKey, KeyFile(home))
}

// ResolveAgentKeyFile is ResolveAgentKey with the key file at path instead
// of <home>/.agentmail/agent.key (the demo platform keeps its own,
// ~/.agentmail/demo.key); path "" means the home directory is unknown.
func ResolveAgentKeyFile(envKey, path string) (string, KeySource, error) {
	if k := strings.TrimSpace(envKey); k != "" {
		return k, KeyFromEnv, nil
	}
	if path == "" {
		return "", "", errors.New("agent key: AGENTMAIL_AGENT_KEY is unset and HOME is unknown; set one of them")
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		line, _, _ := strings.Cut(string(data), "\n")
		if k := strings.TrimSpace(line); k != "" {
			return k, KeyFromFile, nil
		}
		return "", "", fmt.Errorf("agent key file %s is empty: delete it to generate a new key, or write the registered key into it", path)
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("reading agent key file %s: %w", path, err)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("generating an agent key: %w", err)
	}
	key := generatedKeyPrefix + hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", "", fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("saving the generated agent key to %s: %w", path, err)
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return "", "", fmt.Errorf("saving the generated agent key to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", "", fmt.Errorf("saving the generated agent key to %s: %w", path, err)
	}
	return key, KeyFromGenerated, nil
}

// RegistrationHint is the text printed with a generated key (B-1.1,
// issue 18 point 4): in words, the ways an admin registers it, each with the
// agent's name filled in: the web page's place (Admin → Agent keys →
// "Register a key the agent generated") and commands to paste (agentmail
// keys register-agent, which sends the key as key_token, seed 9.9) that
// keep the key out of the shell's history and the process list: on this
// machine one reading keyFile, the file the key was saved to (left out when
// keyFile is ""), and anywhere one reading the key from standard input. The
// key itself is printed by the caller, on its own line. No endpoint: the
// person starting a bridge reads it. The caller says what the bridge does
// next (it waits for a key it has just generated; it stops for a key given
// to it that the gateway refuses).
func RegistrationHint(gatewayURL, agentName, keyFile string) string {
	return registrationHint(gatewayURL, agentName, keyFile, "the key above")
}

// RegistrationHintKeyFile is RegistrationHint for a key that is not printed
// (B-1.1: only when it is made): the web page's way takes the key from
// keyFile, shown on this machine with cat. Nothing reveals the key itself.
func RegistrationHintKeyFile(gatewayURL, agentName, keyFile string) string {
	return registrationHint(gatewayURL, agentName, keyFile,
		"the key saved in "+keyFile+" (show it on this machine with: cat "+shellWord(keyFile)+")")
}

func registrationHint(gatewayURL, agentName, keyFile, theKey string) string {
	name := agentName
	if name == "" {
		name = "<agent name>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "An admin registers this key in one of two ways:\n\n"+
		"    - on the web page %s: Admin → Agent keys → %q, with agent name %s and %s;\n"+
		"    - on the command line, signed in as an admin (agentmail login --url %s), with a command that\n"+
		"      keeps the key out of the shell's history and the process list:\n\n",
		gatewayURL, "Register a key the agent generated", name, theKey, gatewayURL)
	if keyFile != "" {
		fmt.Fprintf(&b, "          agentmail keys register-agent --agent %s --key-file %s\n\n"+
			"      on this machine (it reads the file the key was saved to), or anywhere, pasting the key when asked:\n\n",
			shellWord(name), shellWord(keyFile))
	}
	fmt.Fprintf(&b, "          agentmail keys register-agent --agent %s --key -", shellWord(name))
	return b.String()
}

// shellWord quotes s for a POSIX shell when it holds anything but letters,
// digits and -_.@/, so a pasted command reads the name or path as one word.
func shellWord(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.@/", r)) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
