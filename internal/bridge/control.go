package bridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/agentmail/agentmail/client"
)

// errStopRequested is the cause of a turn's context when a person stopped
// the run (issue 16): adapters see it as context.Cause and cancel the
// platform's own way, as for any end of the context.
var errStopRequested = errors.New("stopped by a person")

// ErrStopRequested is errStopRequested for adapters: context.Cause(ctx) is
// it when a person stopped the turn, not the bridge.
var ErrStopRequested = errStopRequested

// Quiescence waits (seed 004 section 1): after the platform cancelled the
// turn its way, the turn's processes get quiesceWait to be gone by
// themselves, then SIGTERM and quiesceSignalWait, then SIGKILL and
// quiesceSignalWait again. Together with the adapters' own grace this keeps
// a stop under 10 seconds.
const (
	quiesceWait       = 2 * time.Second
	quiesceSignalWait = time.Second
)

// liveRun is a run this bridge is running or holding in the queue: what a
// stop needs to find and cancel it.
type liveRun struct {
	rep     *runReporter
	session string // the conversation's session (the slot's key)
	dir     string

	mu     sync.Mutex
	cancel context.CancelCauseFunc
	queued bool
	ticket *ticket
	pid    int
	stopBy string
	stopAt time.Time
	procs  []procID // the turn's processes when the stop came
}

// stopRequested answers who stopped the run and when ("" when nobody).
func (l *liveRun) stopRequested() (string, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopBy, l.stopAt
}

// maxOwnRuns bounds how many of its own runs a bridge remembers (the
// newest ones): enough to tell its own runs from the ones an earlier bridge
// process left (reconcile.go).
const maxOwnRuns = 4096

// runControl holds the live runs of a bridge by run id and session, and
// the runs this bridge process created (own), live or ended.
type runControl struct {
	mu       sync.Mutex
	byRun    map[string]*liveRun
	idle     map[string]*runReporter // conversation session → its idle run
	own      map[string]*runReporter // run id → this process's run (at most maxOwnRuns)
	ownOrder []string
	closed   chan struct{} // closed at shutdown: idle watchers settle
}

func newRunControl() *runControl {
	return &runControl{byRun: map[string]*liveRun{}, idle: map[string]*runReporter{},
		own: map[string]*runReporter{}, closed: make(chan struct{})}
}

// add holds a live run; it is this process's own from then on. Every run
// is added before its first report, so a run the gateway lists is either
// this process's own or one an earlier process left.
func (c *runControl) add(l *liveRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := l.rep.id()
	c.byRun[id] = l
	if _, ok := c.own[id]; !ok {
		c.own[id] = l.rep
		c.ownOrder = append(c.ownOrder, id)
		if len(c.ownOrder) > maxOwnRuns {
			delete(c.own, c.ownOrder[0])
			c.ownOrder = c.ownOrder[1:]
		}
	}
}

// ownRun answers this process's run with that id, live or ended (nil when
// the run is not this process's).
func (c *runControl) ownRun(runID string) *runReporter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rep := c.own[runID]; rep != nil {
		return rep
	}
	if l := c.byRun[runID]; l != nil {
		return l.rep
	}
	for _, rep := range c.idle { // an idle run outlives maxOwnRuns newer ones
		if rep.id() == runID {
			return rep
		}
	}
	return nil
}

func (c *runControl) remove(l *liveRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRun[l.rep.id()] == l {
		delete(c.byRun, l.rep.id())
	}
}

func (c *runControl) get(runID string) *liveRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byRun[runID]
}

// ofSession answers the session's running run, else its first queued one,
// else nil.
func (c *runControl) ofSession(session string) *liveRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	var queued *liveRun
	for _, l := range c.byRun {
		if l.session != session {
			continue
		}
		l.mu.Lock()
		q, t := l.queued, l.ticket
		l.mu.Unlock()
		if !q {
			return l
		}
		if queued == nil || (t != nil && queued.ticket != nil && t.seq < queued.ticket.seq) {
			queued = l
		}
	}
	return queued
}

// queuedRuns lists the runs waiting for a slot.
func (c *runControl) queuedRuns() []*liveRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*liveRun
	for _, l := range c.byRun {
		l.mu.Lock()
		if l.queued {
			out = append(out, l)
		}
		l.mu.Unlock()
	}
	return out
}

// setIdle records rep as the session's idle run, settling the one before
// it; when exited is not nil, rep settles as finished when it closes.
func (c *runControl) setIdle(ctx context.Context, session string, rep *runReporter, exited <-chan struct{}) {
	c.mu.Lock()
	prev := c.idle[session]
	c.idle[session] = rep
	c.mu.Unlock()
	if prev != nil && prev != rep {
		prev.settle(ctx)
	}
	if exited != nil {
		go func() {
			select {
			case <-exited:
				c.settleIdle(ctx, session, rep)
			case <-c.closed:
			}
		}()
	}
}

// settleIdle settles the session's idle run when it is rep (nil: any).
func (c *runControl) settleIdle(ctx context.Context, session string, rep *runReporter) {
	c.mu.Lock()
	cur := c.idle[session]
	if cur == nil || (rep != nil && cur != rep) {
		c.mu.Unlock()
		return
	}
	delete(c.idle, session)
	c.mu.Unlock()
	cur.settle(ctx)
}

// shutdown settles every idle run as finished: the platform's processes
// end with the bridge.
func (c *runControl) shutdown(ctx context.Context) {
	c.mu.Lock()
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
	idle := c.idle
	c.idle = map[string]*runReporter{}
	c.mu.Unlock()
	for _, rep := range idle {
		rep.settle(ctx)
	}
}

// handleRunStop is the run_stop event (issue 16): a person asked the
// gateway to stop one of this agent's runs. A run this process ran that
// ended already needs nothing; one it never ran (an earlier bridge process
// left it running on the gateway) is ended as the runs found at a
// connection are (reconcileRuns: finished, stopped, quiescence unproven,
// with a notice), in the background.
func (b *Bridge) handleRunStop(ctx context.Context, ev client.RunStopEvent) {
	l := b.ctl.get(ev.RunID)
	if l != nil {
		b.requestStop(l, ev.StoppedBy)
		return
	}
	if b.ctl.ownRun(ev.RunID) != nil {
		b.log.Info("stop asked for a run that already ended", "run_id", ev.RunID, "stopped_by", ev.StoppedBy)
		b.turns.Add(1)
		go func() { defer b.turns.Done(); b.reconcileRuns(ctx) }() // its end report may not have reached the gateway
		return
	}
	b.log.Info("stop asked for a run this bridge does not hold (an earlier bridge process left it): ending it", "run_id", ev.RunID, "stopped_by", ev.StoppedBy)
	b.turns.Add(1)
	go func() { defer b.turns.Done(); b.reconcileRuns(ctx) }()
}

// requestStop stops a live run for person by: a queued run leaves the
// queue; a running turn's processes are noted by pid and its context is
// cancelled with errStopRequested, which makes the adapter cancel the
// platform's own way and every permission ask of the turn answer deny
// (B-9.2). The first request stands; later ones are logged.
func (b *Bridge) requestStop(l *liveRun, by string) {
	l.mu.Lock()
	if l.stopBy != "" {
		l.mu.Unlock()
		b.log.Info("run already stopping", "run_id", l.rep.id(), "stopped_by", l.stopBy, "asked_again_by", by)
		return
	}
	l.stopBy, l.stopAt = by, b.now()
	if !l.queued && l.pid > 0 {
		l.procs = b.turnProcesses(l.pid, l.dir)
	}
	cancel := l.cancel
	l.mu.Unlock()
	b.log.Info("stopping the run", "run_id", l.rep.id(), "session_id", l.session, "stopped_by", by, "processes", len(l.procs))
	if cancel != nil {
		cancel(errStopRequested)
	}
}

// turnProcesses lists the processes a turn started: the platform process
// and everything below it, or, for a platform whose process outlives the
// turn, the processes below it that work in the turn's directory.
func (b *Bridge) turnProcesses(pid int, dir string) []procID {
	if b.caps.PersistentProcess {
		return processTree(pid, false, dir)
	}
	return processTree(pid, true, "")
}

// quiesce proves, by pid, that every process of the stopped turn is gone
// (seed 004 section 1): the ones noted at the stop and the ones found now.
// What the platform's own cancel left running gets SIGTERM, then SIGKILL.
// It answers proven when none is left, unproven otherwise (and when no
// process was ever known: nothing to check is not proof).
func (b *Bridge) quiesce(l *liveRun) string {
	l.mu.Lock()
	pid, procs, queued := l.pid, append([]procID(nil), l.procs...), l.queued
	l.mu.Unlock()
	if queued {
		return client.QuiescenceProven // no process was started for it
	}
	if pid <= 0 {
		if b.caps.InProcess {
			// The turn ran in the bridge and has returned (quiesce runs
			// after RunTurn ends): nothing of it is left to run.
			return client.QuiescenceProven
		}
		return client.QuiescenceUnproven
	}
	seen := map[procID]bool{}
	for _, p := range procs {
		seen[p] = true
	}
	for _, p := range b.turnProcesses(pid, l.dir) {
		if !seen[p] {
			procs = append(procs, p)
		}
	}
	if !b.caps.PersistentProcess {
		// The platform process itself ends with the turn; its group was
		// noted as well.
		if _, ok := readProcStat(pid); ok {
			procs = append(procs, procID{PID: pid, Start: mustStart(pid)})
		}
	}
	live := waitGone(procs, quiesceWait)
	if len(live) > 0 {
		b.log.Warn("processes of the stopped turn still run after the platform's cancel: SIGTERM", "run_id", l.rep.id(), "pids", pids(live))
		signalAll(live, syscall.SIGTERM)
		live = waitGone(live, quiesceSignalWait)
	}
	if len(live) > 0 {
		signalAll(live, syscall.SIGKILL)
		live = waitGone(live, quiesceSignalWait)
	}
	if len(live) > 0 {
		b.log.Error("processes of the stopped turn outlived SIGKILL: quiescence unproven", "run_id", l.rep.id(), "pids", pids(live))
		return client.QuiescenceUnproven
	}
	return client.QuiescenceProven
}

func mustStart(pid int) uint64 {
	st, _ := readProcStat(pid)
	return st.Start
}

func pids(ps []procID) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.PID
	}
	return out
}

// requeue reports the queue positions of the runs waiting for a slot
// after the queue moved.
func (b *Bridge) requeue(ctx context.Context) {
	for _, l := range b.ctl.queuedRuns() {
		l.mu.Lock()
		t := l.ticket
		l.mu.Unlock()
		if t == nil {
			continue
		}
		if ahead, ok := b.slots.ahead(t); ok {
			l.rep.queue(ctx, ahead, b.slots.max)
		}
	}
}

// stopNotice is the mail in the thread after a stop (issue 16): the one
// summary relay of the mail whose turn was stopped (rule (c): no round),
// keyed "run-stopped:<run_id>", in the reader's language, with the
// transcript attached when there is one. The cut turn's own text is never
// relayed.
func (b *Bridge) stopNotice(ctx context.Context, in incoming, run client.Run, transcriptID string) {
	log := b.log.With("mail_id", in.MailID, "session_id", in.SessionID, "run_id", run.RunID)
	to, ok := noticeRecipient(in)
	if !ok {
		log.Info("run stopped; no notice: the sender is not a person or agent", "from", in.FromName)
		return
	}
	secs := int((time.Duration(run.DurationMS) * time.Millisecond).Round(time.Second) / time.Second)
	en, zh := StopNoticeText(run.StoppedBy, secs, run.ToolCalls, transcriptID != "")
	req := client.SendMailRequest{
		To: to, Subject: replySubject(in.Subject), Body: en, ReplyTo: in.MailID,
		Relay: client.RelaySummary, RelayKey: "run-stopped:" + run.RunID,
		Translations: []client.MailTranslation{{Language: "en", Body: en}, {Language: "zh", Body: zh}},
	}
	if transcriptID != "" {
		req.AttachmentIDs = []string{transcriptID}
	}
	resp, err := b.gw.SendMail(context.WithoutCancel(ctx), req)
	if err != nil {
		log.Error("the run was stopped; the stop notice could not be sent", "err", err)
		return
	}
	log.Info("run stopped; notice sent", "notice_mail_id", resp.MailID, "stopped_by", run.StoppedBy, "quiescence", run.Quiescence)
}

// StopNoticeText is the stop notice in English and Chinese: who stopped the
// turn, after how many seconds and tool calls, and whether the transcript
// is attached.
func StopNoticeText(by string, seconds, toolCalls int, transcript bool) (en, zh string) {
	calls := "1 tool call"
	if toolCalls != 1 {
		calls = fmt.Sprintf("%d tool calls", toolCalls)
	}
	en = fmt.Sprintf("Stopped by %s after %d s; %s", by, seconds, calls)
	zh = fmt.Sprintf("%s 在 %d 秒后停止了本轮；%d 次工具调用", by, seconds, toolCalls)
	if transcript {
		en += "; transcript attached."
		zh += "；完整记录见附件。"
	} else {
		en += "."
		zh += "。"
	}
	return en, zh
}
