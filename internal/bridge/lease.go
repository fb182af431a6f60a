package bridge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentmail/agentmail/client"
)

// One bridge process per agent (the gateway's bridge lease, docs/API.md
// "One bridge per agent"). Each process makes a random instance id at its
// start and presents it, with the host name and its process id, when it
// registers and with every heartbeat; its runs listing at each connection
// names it too (reconcile.go). While another process of the agent holds a
// live lease the gateway answers 409 bridge_instance_conflict: at
// registration the bridge stops with the gateway's words (which host and
// process, since when, what to do); on a heartbeat it stops too, since
// the other process has taken over the agent and ended this one's runs.
//
// A restart on the same host must not wait for the lease to expire: the
// bridge keeps its instance in a small file next to the run transcripts
// (instanceFile) and, finding there an instance of this host whose process
// is gone, asks the gateway to replace it at once (RegisterRequest.
// Replaces). A bridge that stops releases its lease (a heartbeat with
// release), so the next one, on any host, connects at once. A gateway
// older than the lease refuses the unknown field:
// the bridge then registers without an instance, as before.

// newInstance makes this process's instance: a random id, the host name
// (cut to client.MaxInstanceHost) and the process id.
func newInstance() client.BridgeInstance {
	var id [16]byte
	_, _ = rand.Read(id[:])
	host, _ := os.Hostname()
	if r := []rune(host); len(r) > client.MaxInstanceHost {
		host = string(r[:client.MaxInstanceHost])
	}
	return client.BridgeInstance{ID: hex.EncodeToString(id[:]), Host: host, PID: os.Getpid()}
}

// instanceFile is where this bridge records its instance for the next
// process of the same agent key on this host: <RunsDir>/bridge-<first 12
// hex digits of the key's SHA-256>.instance ("" when there is no runs
// directory or no key).
func (b *Bridge) instanceFile() string {
	if b.cfg.Settings.RunsDir == "" || b.cfg.Settings.AgentKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(b.cfg.Settings.AgentKey))
	return filepath.Join(b.cfg.Settings.RunsDir, "bridge-"+hex.EncodeToString(sum[:6])+".instance")
}

// endedInstance answers the instance id recorded in instanceFile when it
// belongs to this host and its process has ended (or is this process: a
// restart that got the same pid), else "".
func (b *Bridge) endedInstance() string {
	path := b.instanceFile()
	if path == "" {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data)) // "<id> <pid> <host>"
	if len(f) != 3 || f[2] != b.instance.Host {
		return ""
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return ""
	}
	if pid != os.Getpid() && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return "" // that process still runs (or cannot be checked)
	}
	return f[0]
}

// recordInstance writes this process's instance to instanceFile (0600);
// a failure only costs the next restart the wait for the lease.
func (b *Bridge) recordInstance() {
	path := b.instanceFile()
	if path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
		err = os.WriteFile(path, []byte(fmt.Sprintf("%s %d %s\n", b.instance.ID, b.instance.PID, b.instance.Host)), 0o600)
		if err == nil {
			return
		}
	}
	b.log.Debug("the bridge instance could not be recorded: a restart waits for the lease to expire", "path", path)
}

// leaseInstance answers the instance to present, nil when the gateway
// knows no lease (an older gateway).
func (b *Bridge) leaseInstance() *client.BridgeInstance {
	if b.noLease.Load() {
		return nil
	}
	in := b.instance
	return &in
}

// leaseInstanceID is leaseInstance's id ("" none).
func (b *Bridge) leaseInstanceID() string {
	if in := b.leaseInstance(); in != nil {
		return in.ID
	}
	return ""
}

// isLeaseConflict reports a 409 bridge_instance_conflict.
func isLeaseConflict(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Status == 409 && ae.Body.Code == client.CodeBridgeInstanceConflict
}

// isUnknownInstanceField reports an older gateway's 400 for the instance
// fields it does not know.
func isUnknownInstanceField(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Status == 400 && ae.Body.Code == "unknown_field" &&
		(ae.Body.Field == "instance" || ae.Body.Field == "replaces")
}

// errLeaseLost ends Run when a heartbeat learns that another process of
// the agent holds its lease now.
type errLeaseLost struct{ reason string }

func (e *errLeaseLost) Error() string {
	return "another bridge of this agent took over while this one was not heard from; this bridge stops: " + e.reason
}

// lostLease stops the bridge after a heartbeat's bridge_instance_conflict.
func (b *Bridge) lostLease(err error) {
	b.log.Error("another bridge of this agent took over; this bridge stops (its turns were ended by the other bridge)", "reason", gatewayReason(err))
	if b.stopRun != nil {
		b.stopRun(&errLeaseLost{reason: gatewayReason(err)})
	}
}

// releaseLease ends this process's lease as the bridge stops, so the next
// bridge of the agent, here or elsewhere, connects at once; a failure
// leaves the lease to expire.
func (b *Bridge) releaseLease(ctx context.Context) {
	in := b.leaseInstance()
	if in == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runReportTimeout)
	defer cancel()
	if _, err := b.gw.Heartbeat(rctx, client.HeartbeatRequest{Instance: in, Release: true}); err != nil {
		b.log.Debug("releasing the bridge lease failed: it expires by itself", "err", err)
	}
}
