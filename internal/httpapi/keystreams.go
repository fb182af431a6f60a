package httpapi

import "sync"

// keyStreams tracks the open event streams by the key that authenticated
// them, so revoking a key ends its streams at once (expiry is caught by the
// stream's own check at each heartbeat). The zero value is ready to use.
type keyStreams struct {
	mu sync.Mutex
	m  map[string]map[chan struct{}]struct{}
}

// add registers a stream opened with keyID; the channel is closed when the
// key is revoked, and done unregisters the stream. With limit streams of
// keyID open already (limit > 0) it registers nothing and answers ok false:
// the cap of streams per key (Options.MaxStreamsPerKey).
func (k *keyStreams) add(keyID string, limit int) (revoked <-chan struct{}, done func(), ok bool) {
	ch := make(chan struct{})
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]map[chan struct{}]struct{}{}
	}
	set := k.m[keyID]
	if limit > 0 && len(set) >= limit {
		k.mu.Unlock()
		return nil, func() {}, false
	}
	if set == nil {
		set = map[chan struct{}]struct{}{}
		k.m[keyID] = set
	}
	set[ch] = struct{}{}
	k.mu.Unlock()
	return ch, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if set, ok := k.m[keyID]; ok {
			if _, open := set[ch]; open {
				delete(set, ch)
				close(ch)
			}
			if len(set) == 0 {
				delete(k.m, keyID)
			}
		}
	}, true
}

// revoke ends every stream opened with keyID.
func (k *keyStreams) revoke(keyID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for ch := range k.m[keyID] {
		close(ch)
	}
	delete(k.m, keyID)
}
