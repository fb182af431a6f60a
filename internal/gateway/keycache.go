package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Two read caches take the database off the path of every request:
//
//   - keyCache holds verified bearer keys (by token hash) with their person
//     owner's role and disabled flag for Config.KeyCacheTTL on the service
//     clock. Revoking a key or changing a person through this Service
//     empties it at once (after the commit); a change made by another
//     replica is seen once the entry is older than the TTL, so there a
//     revocation takes effect within KeyCacheTTL (2 s by default). Expiry
//     (expires_at) is checked against the clock at every use, and one-time
//     keys are never cached: the database decides their first use.
//   - nameKinds holds the kind (person or agent) of names found: names are
//     claimed for good and never change kind, so an entry never goes stale.

// keyCacheMax bounds the cached keys; a full cache is emptied.
const keyCacheMax = 10000

// cachedKey is one verified key as read from the database.
type cachedKey struct {
	key   store.KeyRow
	owner *store.UserRow // user keys: the person owning it; nil when it no longer exists
	until time.Time      // service clock
}

// keyCache maps token hashes to verified keys. The zero value is ready.
type keyCache struct {
	mu  sync.Mutex
	gen uint64 // bumped by invalidate; a read begun before it is not stored
	m   map[string]cachedKey
}

func (c *keyCache) get(hash string, now time.Time) (cachedKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || !now.Before(e.until) {
		return cachedKey{}, false
	}
	return e, true
}

func (c *keyCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put stores e unless the cache was invalidated since generation gen was
// read (the row may predate a revocation).
func (c *keyCache) put(hash string, e cachedKey, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= keyCacheMax {
		c.m = map[string]cachedKey{}
	}
	c.m[hash] = e
}

// touched records the key's last use in its cached row, so the once a
// minute TouchKey write is not repeated at every request.
func (c *keyCache) touched(hash string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[hash]; ok {
		t := now
		e.key.LastUsedAt = &t
		c.m[hash] = e
	}
}

// invalidate forgets every cached key; call it after the commit of a
// change to keys or people.
func (c *keyCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m = nil
}

// lookupKey answers the key with token hash hash and, for a user key, its
// owner (nil when the person no longer exists), from the key cache or the
// database. store.ErrNotFound when no key has that hash.
func (s *Service) lookupKey(ctx context.Context, hash string) (store.KeyRow, *store.UserRow, error) {
	now := s.Now()
	ttl := s.Config.KeyCacheTTL
	if ttl > 0 {
		if e, ok := s.keys.get(hash, now); ok {
			return e.key, e.owner, nil
		}
	}
	gen := s.keys.generation()
	k, err := s.Read().KeyByHash(ctx, hash)
	if err != nil {
		return k, nil, err
	}
	var owner *store.UserRow
	cacheable := ttl > 0 && k.Lifecycle != client.LifecycleOneTime
	if k.Kind == KeyUser {
		u, err := s.Read().GetUser(ctx, k.Owner)
		switch {
		case err == nil:
			owner = &u
		case !errors.Is(err, store.ErrNotFound):
			cacheable = false
		}
	}
	if cacheable {
		s.keys.put(hash, cachedKey{key: k, owner: owner, until: now.Add(ttl)}, gen)
	}
	return k, owner, nil
}

// nameKind answers the kind of a person or agent name (store.KindPerson or
// store.KindAgent), or store.ErrNotFound; found kinds are kept for good.
func (s *Service) nameKind(ctx context.Context, q *store.Q, name string) (string, error) {
	if v, ok := s.nameKinds.Load(name); ok {
		return v.(string), nil
	}
	kind, err := q.NameKind(ctx, name)
	if err == nil {
		s.nameKinds.Store(name, kind)
	}
	return kind, err
}
