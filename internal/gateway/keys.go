package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// Key kinds.
const (
	KeyAgent = "agent"
	KeyUser  = "user"
)

// Token prefixes of keys the gateway issues.
const (
	agentTokenPrefix = "amk_"
	userTokenPrefix  = "amu_"
)

// MinClientTokenLength is the shortest client-generated agent key accepted
// (seed 9.9, B-1.1: the bridge generates its own key).
const MinClientTokenLength = 24

// AuthKey resolves a bearer token to a principal, or a 401 when it is
// unknown, revoked, expired, a used one-time key, or its owner is disabled.
// A one-time key dies on this, its first successful use: the database
// decides which request was first.
func (s *Service) AuthKey(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, Unauthorized("missing_key", "no key given")
	}
	hash := HashToken(token)
	k, owner, err := s.lookupKey(ctx, hash) // keycache.go
	if errors.Is(err, store.ErrNotFound) && strings.HasPrefix(token, turnTokenPrefix) {
		return s.authTurnToken(ctx, hash) // turntokens.go
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, Unauthorized("invalid_key", "the key is unknown")
	}
	if err != nil {
		return nil, err
	}
	now := s.Now()
	switch {
	case k.RevokedAt != nil:
		return nil, Unauthorized("key_revoked", "the key was revoked")
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return nil, Unauthorized("key_expired", "the key expired")
	case k.Lifecycle == client.LifecycleOneTime && k.UsedAt != nil:
		return nil, Unauthorized("key_used", "the one-time key was already used")
	}
	p := &Principal{Name: k.Owner, KeyID: k.KeyID}
	if k.Kind == KeyAgent {
		p.Kind, p.AuthKind = PrincipalAgent, AuthAgentKey
	} else {
		if owner == nil {
			return nil, Unauthorized("invalid_key", "the key's owner no longer exists")
		}
		u := *owner
		if u.Disabled {
			return nil, accountDisabled("the account owning this key")
		}
		p.Kind, p.AuthKind, p.Role = PrincipalPerson, AuthUserKey, u.Role
	}
	if k.Lifecycle == client.LifecycleOneTime {
		var first bool
		err := s.Write(ctx, func(tx *Tx) error {
			var err error
			first, err = tx.UseOneTimeKey(ctx, k.KeyID, tx.Now)
			return err
		})
		if err != nil {
			return nil, err
		}
		if !first {
			return nil, Unauthorized("key_used", "the one-time key was already used")
		}
	} else if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > time.Minute {
		// Recorded at most once a minute so a busy key does not turn every
		// read into a write.
		// No rule rests on it: a shared write (runs beside sends).
		if err := s.WriteShared(ctx, func(tx *Tx) error { return tx.TouchKey(ctx, k.KeyID, tx.Now) }); err != nil {
			s.Log.Warn("touch key", "key_id", k.KeyID, "err", err)
		} else {
			s.keys.touched(hash, now)
		}
	}
	return p, nil
}

// CheckKeyActive answers nil while the key keyID may keep serving a
// connection it authenticated (an open event stream), or a 401 once it was
// revoked (key_revoked), reached expires_at on the service clock
// (key_expired), was removed, or its person owner was disabled. A one-time
// key's first use does not end the connection it opened. Database faults
// are returned as they are (not *Error).
func (s *Service) CheckKeyActive(ctx context.Context, keyID string) error {
	k, err := s.Read().GetKey(ctx, keyID)
	if errors.Is(err, store.ErrNotFound) {
		return Unauthorized("invalid_key", "the key is unknown")
	}
	if err != nil {
		return err
	}
	switch {
	case k.RevokedAt != nil:
		return Unauthorized("key_revoked", "the key was revoked")
	case k.ExpiresAt != nil && !s.Now().Before(*k.ExpiresAt):
		return Unauthorized("key_expired", "the key expired")
	}
	if k.Kind == KeyUser {
		if u, err := s.Read().GetUser(ctx, k.Owner); errors.Is(err, store.ErrNotFound) {
			return Unauthorized("invalid_key", "the key's owner no longer exists")
		} else if err != nil {
			return err
		} else if u.Disabled {
			return accountDisabled("the account owning this key")
		}
	}
	return nil
}

// checkLifecycle validates lifecycle and expires_at together.
func (s *Service) checkLifecycle(lifecycle string, expires *time.Time) (string, error) {
	if lifecycle == "" {
		lifecycle = client.LifecyclePermanent
	}
	switch lifecycle {
	case client.LifecyclePermanent, client.LifecycleOneTime:
		if expires != nil {
			return "", Invalid("expires_at", fmt.Sprintf("expires_at is only allowed with lifecycle %q", client.LifecycleTimed),
				`drop expires_at or use lifecycle "timed"`)
		}
	case client.LifecycleTimed:
		if expires == nil {
			return "", Invalid("expires_at", `lifecycle "timed" needs expires_at`, "send expires_at as an RFC 3339 time in the future")
		}
		if !expires.After(s.Now()) {
			return "", Invalid("expires_at", "expires_at is not in the future", "send a later time")
		}
	default:
		return "", Invalid("lifecycle", fmt.Sprintf("lifecycle %q is not one of permanent, one_time, timed", lifecycle),
			`use "permanent", "one_time" or "timed"`)
	}
	return lifecycle, nil
}

// KeyView converts a stored key to its API form.
func (s *Service) KeyView(k store.KeyRow) client.KeyInfo {
	now := s.Now()
	active := k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt)) &&
		!(k.Lifecycle == client.LifecycleOneTime && k.UsedAt != nil)
	var exp *time.Time
	if k.ExpiresAt != nil {
		t := *k.ExpiresAt
		exp = &t
	}
	return client.KeyInfo{KeyID: k.KeyID, Kind: k.Kind, Owner: k.Owner, Label: k.Label, Lifecycle: k.Lifecycle,
		Prefix: k.Prefix, ExpiresAt: exp, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt, Active: active}
}

func tokenPrefix(token string) string {
	r := []rune(token)
	if len(r) > 8 {
		r = r[:8]
	}
	return string(r)
}

// CreateUserKey issues a key for the person's own mailbox from third-party
// clients (POST /me/keys); the token is in the answer once, only its hash is
// kept. A user key can never register an agent. A key creating a key is
// bound by CheckKeyIssuer (403 naming lifecycle or expires_at). A label
// over MaxKeyLabelRunes is 400 naming label; a person already holding
// MaxUserKeysPerPerson working keys gets 409 too_many_keys, so key minting
// cannot grow the database (and GET /me/keys) without bound.
func (s *Service) CreateUserKey(ctx context.Context, p *Principal, req client.CreateUserKeyRequest) (*client.CreatedKey, error) {
	lc, err := s.checkLifecycle(req.Lifecycle, req.ExpiresAt)
	if err != nil {
		return nil, err
	}
	if err := checkKeyLabel(req.Label); err != nil {
		return nil, err
	}
	if err := s.CheckKeyIssuer(ctx, p, lc, req.ExpiresAt); err != nil {
		return nil, err
	}
	token := RandomToken(userTokenPrefix)
	k := store.KeyRow{KeyID: store.NewID(), TokenHash: HashToken(token), Kind: KeyUser, Owner: p.Name,
		Label: strings.TrimSpace(req.Label), Lifecycle: lc, Prefix: tokenPrefix(token), ExpiresAt: req.ExpiresAt}
	err = s.Write(ctx, func(tx *Tx) error {
		k.CreatedAt = tx.Now
		n, err := tx.CountActiveKeys(ctx, KeyUser, p.Name, tx.Now)
		if err != nil {
			return err
		}
		if n >= MaxUserKeysPerPerson {
			return Conflict("too_many_keys", fmt.Sprintf("you have %d keys that still work, the most a person may hold", n), SuggestRevokeKeys)
		}
		return tx.InsertKey(ctx, k)
	})
	if err != nil {
		return nil, err
	}
	return &client.CreatedKey{KeyID: k.KeyID, KeyToken: token, KeyInfo: s.KeyView(k)}, nil
}

// Bounds of keys (trust boundary): what a person may store through
// POST /me/keys, and any key's label.
const (
	// MaxUserKeysPerPerson is how many working user keys (not revoked,
	// expired or used) one person may hold; the next is 409 too_many_keys.
	MaxUserKeysPerPerson = 200
	// MaxKeyLabelRunes bounds a key's label; longer is 400 naming label.
	MaxKeyLabelRunes = 200
)

// SuggestRevokeKeys is the suggestion of a 409 too_many_keys (people read
// their own words for it, httpapi/personwords.go).
const SuggestRevokeKeys = "revoke keys you no longer use (GET /api/v1/me/keys, DELETE /api/v1/me/keys/{key_id}), then create the new one"

// checkKeyLabel bounds a key's label to MaxKeyLabelRunes characters.
func checkKeyLabel(label string) error {
	if n := utf8.RuneCountInString(strings.TrimSpace(label)); n > MaxKeyLabelRunes {
		return Invalid("label", fmt.Sprintf("label has %d characters, at most %d", n, MaxKeyLabelRunes), "shorten it")
	}
	return nil
}

// CheckKeyIssuer is the key-lifetime rule (trust boundary, point 7): a key
// can only create keys that expire no later than itself, so a short-lived
// or stolen key cannot be turned into a lasting one.
//
//   - A cookie session (a person signed in with their password: the page,
//     `agentmail login`) may create any key.
//   - A permanent key may create any key.
//   - A one_time key cannot create keys at all: 403 key_cannot_create_keys,
//     field "Authorization".
//   - A timed key (expiring at E) may create only timed keys with
//     expires_at at or before E: a permanent or one_time key (neither
//     expires by time) is 403 key_outlives_creator naming "lifecycle", a
//     later expires_at the same code naming "expires_at".
//
// lifecycle and expires are the new key's, already checked by
// checkLifecycle. A principal without a key (nil) passes; agent keys never
// reach the key-creating endpoints.
func (s *Service) CheckKeyIssuer(ctx context.Context, p *Principal, lifecycle string, expires *time.Time) error {
	if p == nil || p.AuthKind == AuthCookie || p.KeyID == "" {
		return nil
	}
	k, err := s.Read().GetKey(ctx, p.KeyID)
	if err != nil {
		return err
	}
	const signIn = "sign in with your password (the web page or `agentmail login`) to create it"
	switch {
	case k.Lifecycle == client.LifecycleOneTime:
		return &Error{Kind: KindForbidden, Code: "key_cannot_create_keys", Field: "Authorization",
			Message:    "a one-time key cannot create keys",
			Suggestion: "use a permanent or timed key, or " + signIn}
	case k.ExpiresAt == nil:
		return nil
	}
	until := k.ExpiresAt.UTC().Format(time.RFC3339)
	if lifecycle != client.LifecycleTimed {
		return &Error{Kind: KindForbidden, Code: "key_outlives_creator", Field: "lifecycle",
			Message: fmt.Sprintf("the key making this request expires at %s, so it can only create keys that expire by then; a %s key does not",
				until, lifecycle),
			Suggestion: fmt.Sprintf(`use lifecycle "timed" with expires_at at or before %s, or %s`, until, signIn)}
	}
	if expires.After(*k.ExpiresAt) {
		return &Error{Kind: KindForbidden, Code: "key_outlives_creator", Field: "expires_at",
			Message: fmt.Sprintf("expires_at %s is later than %s, when the key making this request expires",
				expires.UTC().Format(time.RFC3339), until),
			Suggestion: fmt.Sprintf("send expires_at at or before %s, or %s", until, signIn)}
	}
	return nil
}

// CheckLastingCredentialIssuer extends the key-lifetime rule to what outlives
// any key: an account with a password (POST /admin/users) and a new
// password or role for an account (PATCH /admin/users/{name}). Only a cookie
// session or a permanent key may do these; a timed or one-time key is 403
// key_cannot_create_credentials (field "Authorization"), so a short-lived
// admin key cannot mint a lasting admin or take over another person.
func (s *Service) CheckLastingCredentialIssuer(ctx context.Context, p *Principal) error {
	if p == nil || p.AuthKind == AuthCookie || p.KeyID == "" {
		return nil
	}
	k, err := s.Read().GetKey(ctx, p.KeyID)
	if err != nil {
		return err
	}
	if k.Lifecycle == client.LifecyclePermanent {
		return nil
	}
	return &Error{Kind: KindForbidden, Code: "key_cannot_create_credentials", Field: "Authorization",
		Message:    fmt.Sprintf("a %s key cannot create accounts or set passwords or roles: they would outlive it", k.Lifecycle),
		Suggestion: "sign in with your password (the web page or `agentmail login`), or use a permanent key"}
}

// CreateAgentKeyAs is CreateAgentKey for the caller p (POST
// /admin/agent-keys): the key-lifetime rule of CheckKeyIssuer applies to the
// admin's key first.
func (s *Service) CreateAgentKeyAs(ctx context.Context, p *Principal, req client.CreateAgentKeyRequest) (*client.CreatedKey, error) {
	lc, err := s.checkLifecycle(req.Lifecycle, req.ExpiresAt)
	if err != nil {
		return nil, err
	}
	if err := s.CheckKeyIssuer(ctx, p, lc, req.ExpiresAt); err != nil {
		return nil, err
	}
	return s.CreateAgentKey(ctx, req)
}

// ListKeys answers keys of a kind; owner "" lists every owner (admin).
func (s *Service) ListKeys(ctx context.Context, kind, owner string) (*client.KeyList, error) {
	rows, err := s.Read().ListKeys(ctx, kind, owner)
	if err != nil {
		return nil, err
	}
	out := &client.KeyList{Keys: []client.KeyInfo{}}
	for _, k := range rows {
		out.Keys = append(out.Keys, s.KeyView(k))
	}
	return out, nil
}

// RevokeKey revokes a key of the kind; owner "" lets an admin revoke any.
// An unknown, foreign or already revoked key is a 404.
func (s *Service) RevokeKey(ctx context.Context, kind, owner, keyID string) error {
	err := s.Write(ctx, func(tx *Tx) error {
		ok, err := tx.RevokeKey(ctx, keyID, kind, owner, tx.Now)
		if err != nil {
			return err
		}
		if !ok {
			return NotFound("key_not_found", "no such active key", "list keys to find its key_id")
		}
		return nil
	})
	if err == nil {
		s.keys.invalidate() // this replica refuses the key at once (keycache.go)
	}
	return err
}

// CreateAgentKey registers a client-generated token (KeyToken set, seed
// 9.9) or issues one (answered once) for an agent (admin). The agent row is
// created with the key when the name is new (stored in lower case,
// NormalizeName; a reserved name is a 400 reserved_name naming
// agent_name); a name used by a person is a 409, as is a token registered
// before. A new agent name that looks like an existing person's or agent's
// ("аlpha", "ａlpha" next to "alpha") is a 409 name_confusable, one mixing
// alphabets a 400 name_mixed_scripts (claimNewName); a key for an
// existing agent is never refused for its name.
func (s *Service) CreateAgentKey(ctx context.Context, req client.CreateAgentKeyRequest) (*client.CreatedKey, error) {
	req.AgentName = NormalizeName(req.AgentName)
	if err := address.ValidName(req.AgentName); err != nil {
		return nil, Invalid("agent_name", err.Error(), "use 1-64 letters, digits, '-' or '_'")
	}
	lc, err := s.checkLifecycle(req.Lifecycle, req.ExpiresAt)
	if err != nil {
		return nil, err
	}
	if err := checkKeyLabel(req.Label); err != nil {
		return nil, err
	}
	token, issued := strings.TrimSpace(req.KeyToken), false
	if token == "" {
		token, issued = RandomToken(agentTokenPrefix), true
	} else {
		if len(token) < MinClientTokenLength || len(token) > 512 {
			return nil, Invalid("key_token", fmt.Sprintf("key_token must have %d to 512 characters", MinClientTokenLength),
				"send the whole key the bridge printed, or omit key_token to have one issued")
		}
		for _, r := range token {
			if unicode.IsSpace(r) || unicode.IsControl(r) {
				return nil, Invalid("key_token", "key_token contains whitespace", "send the key exactly as printed")
			}
		}
	}
	k := store.KeyRow{KeyID: store.NewID(), TokenHash: HashToken(token), Kind: KeyAgent, Owner: req.AgentName,
		Label: strings.TrimSpace(req.Label), Lifecycle: lc, Prefix: tokenPrefix(token), ExpiresAt: req.ExpiresAt}
	err = s.Write(ctx, func(tx *Tx) error {
		k.CreatedAt = tx.Now
		if err := s.ensureAgentTx(ctx, tx, req.AgentName); err != nil {
			return err
		}
		if err := tx.InsertKey(ctx, k); err != nil {
			if tx.IsUniqueViolation(err) {
				return Conflict("key_exists", "this key_token is already registered", "generate a new key, or revoke the old registration first")
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &client.CreatedKey{KeyID: k.KeyID, KeyInfo: s.KeyView(k)}
	if issued {
		out.KeyToken = token
	}
	return out, nil
}

// ensureAgentTx creates the agent row for name unless it exists; a person's
// name is a 409.
func (s *Service) ensureAgentTx(ctx context.Context, tx *Tx, name string) error {
	kind, err := tx.NameKind(ctx, name)
	switch {
	case err == nil && kind == store.KindAgent:
		return nil
	case err == nil:
		return Conflict("name_taken", fmt.Sprintf("%q is a person's name; people and agents share one name space", name), "choose another agent name")
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if err := checkReservedName("agent_name", name, false); err != nil {
		return err
	}
	ok, err := claimNewName(ctx, tx, "agent_name", name, store.KindAgent)
	if err != nil {
		return err
	}
	if !ok {
		return Conflict("name_taken", fmt.Sprintf("the name %q is taken", name), "choose another agent name")
	}
	return tx.InsertAgent(ctx, store.AgentRow{Name: name, Workspaces: "[]", DefaultRounds: s.Config.DefaultRounds, CreatedAt: tx.Now})
}
