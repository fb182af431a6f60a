package httpapi

import (
	"strings"
	"sync"
)

// keyStreams tracks the open event streams by the key (or cookie session,
// "cookie:<hash>") that authenticated them and by the person or agent they
// belong to, so revoking a key, signing out, a password change and
// disabling an account end the streams concerned at once (expiry, and ends
// on another replica, are caught by the stream's own check at each
// heartbeat). The zero value is ready to use.
type keyStreams struct {
	mu     sync.Mutex
	m      map[string]map[chan struct{}]struct{}
	owner  map[string]string // stream key → the principal's name
	counts map[string]int    // the principal's name → its open streams
}

// cookieStreamKey is the key of the streams opened with the cookie session
// whose hash is cookieID.
func cookieStreamKey(cookieID string) string { return "cookie:" + cookieID }

// add registers a stream opened with keyID by the principal named owner;
// the channel is closed when the key is revoked, and done unregisters the
// stream. With limit streams of keyID open already (limit > 0), or
// ownerLimit streams of owner over all its keys (ownerLimit > 0), it
// registers nothing and answers ok false and which cap was reached: the
// cap of streams per key (Options.MaxStreamsPerKey) or per principal
// (StreamsPerPrincipalFactor times it).
func (k *keyStreams) add(keyID, owner string, limit, ownerLimit int) (revoked <-chan struct{}, done func(), ok, ownerFull bool) {
	ch := make(chan struct{})
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]map[chan struct{}]struct{}{}
		k.owner = map[string]string{}
		k.counts = map[string]int{}
	}
	set := k.m[keyID]
	if limit > 0 && len(set) >= limit {
		k.mu.Unlock()
		return nil, func() {}, false, false
	}
	if ownerLimit > 0 && k.counts[owner] >= ownerLimit {
		k.mu.Unlock()
		return nil, func() {}, false, true
	}
	if set == nil {
		set = map[chan struct{}]struct{}{}
		k.m[keyID] = set
		k.owner[keyID] = owner
	}
	set[ch] = struct{}{}
	k.counts[owner]++
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
				delete(k.owner, keyID)
			}
		}
		// A revoked stream left k.m already; its place is freed here, when
		// its handler returns.
		if k.counts[owner]--; k.counts[owner] <= 0 {
			delete(k.counts, owner)
		}
	}, true, false
}

// revoke ends every stream opened with keyID.
func (k *keyStreams) revoke(keyID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.revokeLocked(keyID)
}

func (k *keyStreams) revokeLocked(keyID string) {
	for ch := range k.m[keyID] {
		close(ch)
	}
	delete(k.m, keyID)
	delete(k.owner, keyID)
}

// revokeCookies ends the streams that owner opened with a cookie session,
// except those of the cookie session keepCookieID ("" keeps none): the
// sign-ins a password change ends.
func (k *keyStreams) revokeCookies(owner, keepCookieID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, o := range k.owner {
		if o == owner && strings.HasPrefix(key, cookieStreamKey("")) && (keepCookieID == "" || key != cookieStreamKey(keepCookieID)) {
			k.revokeLocked(key)
		}
	}
}

// revokeOwner ends every stream of owner, whatever opened it: the streams
// of a disabled account.
func (k *keyStreams) revokeOwner(owner string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, o := range k.owner {
		if o == owner {
			k.revokeLocked(key)
		}
	}
}
