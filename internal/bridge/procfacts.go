package bridge

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procID names one process by pid and start time (clock ticks since boot,
// /proc/<pid>/stat field 22), so that a pid the kernel reused is never
// taken for the process it named before.
type procID struct {
	PID   int
	Start uint64
}

// procStat is the part of /proc/<pid>/stat the quiescence check reads.
type procStat struct {
	State string // R, S, D, Z, ...
	PPID  int
	PGRP  int
	Start uint64
}

// readProcStat reads /proc/<pid>/stat; ok false when the process is gone
// or /proc cannot tell.
func readProcStat(pid int) (procStat, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procStat{State: f[0], PPID: ppid, PGRP: pgrp, Start: start}, true
}

// procAlive reports whether p still runs: the pid exists with the same
// start time and is not a zombie (a zombie has exited; only its exit
// status waits to be read).
func procAlive(p procID) bool {
	st, ok := readProcStat(p.PID)
	return ok && st.Start == p.Start && st.State != "Z"
}

// allProcs lists every live process with its stat.
func allProcs() map[int]procStat {
	out := map[int]procStat{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok && st.State != "Z" {
			out[pid] = st
		}
	}
	return out
}

// processTree lists root (when withRoot) and every live descendant of it,
// and every live member of root's process group: the processes a turn
// started. underDir, when not "", keeps only descendants whose working
// directory is that directory or below it (or cannot be read: kept, so
// nothing is missed): on a platform whose one process serves several turns
// the slot scheduler runs one turn per directory, so a tool process of
// this turn runs there.
func processTree(root int, withRoot bool, underDir string) []procID {
	if root <= 0 {
		return nil
	}
	all := allProcs()
	rootStat, ok := all[root]
	children := map[int][]int{}
	for pid, st := range all {
		children[st.PPID] = append(children[st.PPID], pid)
	}
	seen := map[int]bool{}
	var out []procID
	add := func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		out = append(out, procID{PID: pid, Start: all[pid].Start})
	}
	if ok && withRoot {
		add(root)
	}
	queue := append([]int(nil), children[root]...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] || pid == root {
			continue
		}
		if underDir == "" || cwdUnder(pid, underDir) {
			add(pid)
		}
		queue = append(queue, children[pid]...)
	}
	if ok && withRoot && rootStat.PGRP == root {
		for pid, st := range all {
			if st.PGRP == root {
				add(pid)
			}
		}
	}
	return out
}

// cwdUnder reports whether pid's working directory is dir or below it; an
// unreadable one counts as under.
func cwdUnder(pid int, dir string) bool {
	cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	if err != nil {
		return true
	}
	dir = filepath.Clean(dir)
	return cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator))
}

// liveOf lists the processes of ps that still run.
func liveOf(ps []procID) []procID {
	var out []procID
	for _, p := range ps {
		if procAlive(p) {
			out = append(out, p)
		}
	}
	return out
}

// signalAll sends sig to every process of ps that is still the process it
// named.
func signalAll(ps []procID, sig syscall.Signal) {
	for _, p := range ps {
		if procAlive(p) {
			_ = syscall.Kill(p.PID, sig)
		}
	}
}

// waitGone polls until every process of ps is gone or d passed, and
// answers the ones still running.
func waitGone(ps []procID, d time.Duration) []procID {
	deadline := time.Now().Add(d)
	for {
		live := liveOf(ps)
		if len(live) == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// EndDescendants ends the processes below root that a platform's own cancel
// left running (issue 16: a stop ends within seconds): every descendant, or
// with underDir only those working in underDir or below (as processTree
// selects them), gets SIGTERM, then SIGKILL when it is still there after
// grace. It returns the pids it signalled. Adapters call it for a stopped
// turn whose platform did not end the turn's tool processes after its
// cancel; root itself is never signalled.
func EndDescendants(root int, underDir string, grace time.Duration) []int {
	procs := liveOf(processTree(root, false, underDir))
	if len(procs) == 0 {
		return nil
	}
	signalAll(procs, syscall.SIGTERM)
	if live := waitGone(procs, grace); len(live) > 0 {
		signalAll(live, syscall.SIGKILL)
		waitGone(live, grace)
	}
	return pids(procs)
}
