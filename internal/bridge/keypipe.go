package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// The agent key out of the bridge's own environment (issue 12, point 9).
// A process's environment stays readable in /proc/<pid>/environ for its
// whole life, whatever it unsets, to every process of the same user. A
// bridge started with AGENTMAIL_AGENT_KEY therefore replaces itself at once
// (execve: same pid, same arguments, same standard streams) with a copy of
// itself whose environment lacks the key; the key travels through a pipe
// that only the new image inherits, and is read and closed before anything
// else starts.

// KeyFDEnv names the inherited descriptor that carries the agent key into
// the re-executed bridge. It holds a descriptor number, never the key.
const KeyFDEnv = "AGENTMAIL_AGENT_KEY_FD"

// agentKeyEnv is the variable the key may be given in (B-1.1).
const agentKeyEnv = "AGENTMAIL_AGENT_KEY"

// maxKeyBytes bounds what is read from the key pipe.
const maxKeyBytes = 4096

// ReexecWithoutKey re-executes the running bridge once when environ (an
// os.Environ-style list) holds a non-empty AGENTMAIL_AGENT_KEY: the same
// executable (/proc/self/exe) with argv and environ minus that variable,
// plus KeyFDEnv naming a pipe that holds the key. On success it does not
// return; the process keeps its pid, so signals and the exit code reach
// whoever started it as before. It returns nil at once when there is no key
// in environ, and an error when the re-execution failed (the caller goes on
// with the key in its environment and says so).
func ReexecWithoutKey(argv, environ []string) error {
	key := ""
	rest := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case agentKeyEnv:
			key = strings.TrimSpace(v)
		case KeyFDEnv:
		default:
			rest = append(rest, kv)
		}
	}
	if key == "" {
		return nil
	}
	if len(key) > maxKeyBytes {
		return fmt.Errorf("%s is longer than %d bytes", agentKeyEnv, maxKeyBytes)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("a pipe for the agent key: %w", err)
	}
	defer r.Close()
	// The key fits into the pipe's buffer, so the write needs no reader.
	_, err = io.WriteString(w, key)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the agent key into its pipe: %w", err)
	}
	// Both ends are close-on-exec. A copy of the read end at 3 or above
	// (never a standard stream, even when one was closed) without that flag
	// is what survives execve.
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_DUPFD, 3)
	if errno != 0 {
		return fmt.Errorf("passing the agent key pipe on: %w", errno)
	}
	fd := int(nfd)
	defer syscall.Close(fd) // only reached when execve failed
	exe := "/proc/self/exe" // also when the file was replaced since the start
	if runtime.GOOS != "linux" {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("locating the agentmail binary: %w", err)
		}
	}
	err = syscall.Exec(exe, argv, append(rest, KeyFDEnv+"="+strconv.Itoa(fd)))
	return fmt.Errorf("re-executing %s without the agent key in its environment: %w", exe, err)
}

// KeyFromPipe reads the agent key that ReexecWithoutKey passed on: when
// getenv(KeyFDEnv) names a descriptor, the key is read from it, the
// descriptor is closed and KeyFDEnv is removed from the environment, so
// nothing the bridge starts inherits either. It answers "" without KeyFDEnv.
// Errors: a value that is not a descriptor number, a descriptor that cannot
// be read, or an empty key.
func KeyFromPipe(getenv func(string) string) (string, error) {
	v := strings.TrimSpace(getenv(KeyFDEnv))
	if v == "" {
		return "", nil
	}
	_ = os.Unsetenv(KeyFDEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return "", fmt.Errorf("%s=%q is not a descriptor the bridge passed on; unset it", KeyFDEnv, v)
	}
	f := os.NewFile(uintptr(fd), "agent key pipe")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading the agent key from descriptor %d (%s): %w", fd, KeyFDEnv, err)
	}
	key := strings.TrimSpace(string(data))
	if key == "" || len(data) > maxKeyBytes {
		return "", errors.New("the agent key passed on by the bridge's re-execution is empty or too long; set AGENTMAIL_AGENT_KEY again")
	}
	return key, nil
}
