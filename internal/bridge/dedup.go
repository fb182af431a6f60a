package bridge

import "sync"

// maxDelivered bounds the de-duplication set; the oldest ids are forgotten
// first. Catch-up (B-7) and the gateway's run records cover what falls out.
const maxDelivered = 10000

// deliveredSet is B-3's deliveredMails: the one de-duplication set shared
// by SSE delivery and catch-up (B-7.3). add is atomic check-and-insert, so
// a mail that arrives both ways runs once.
type deliveredSet struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string
}

func newDeliveredSet() *deliveredSet { return &deliveredSet{ids: map[string]bool{}} }

// add records id and reports whether it was new.
func (d *deliveredSet) add(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids[id] {
		return false
	}
	d.ids[id] = true
	d.order = append(d.order, id)
	if len(d.order) > maxDelivered {
		old := d.order[0]
		d.order = d.order[1:]
		delete(d.ids, old)
	}
	return true
}

// has reports whether id was delivered (B-7.6: checked again before each
// catch-up delivery).
func (d *deliveredSet) has(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ids[id]
}
