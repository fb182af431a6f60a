package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// ThrottleRule is the sign-in throttling of one kind of key. Failed
// attempts are counted per key; once Limit of them were counted,
// the key is locked for Base after the latest, and every further failure
// doubles that wait up to Max. A count with no failure for Forget is
// cleared; so is a username's count on a successful sign-in.
type ThrottleRule struct {
	Limit  int
	Base   time.Duration
	Max    time.Duration
	Forget time.Duration
}

// Sign-in throttling (docs/API.md "Sign-in throttling"). The counts live in
// the database (login_throttle), so the limits hold across replicas.
var (
	// UsernameThrottle: the fifth failed sign-in in a row for a username
	// locks it for 5 minutes, each further failure doubles the wait up to
	// one hour; 24 hours without a failure or a successful sign-in clear it.
	UsernameThrottle = ThrottleRule{Limit: 5, Base: 5 * time.Minute, Max: time.Hour, Forget: 24 * time.Hour}
	// AddressThrottle: 20 failed sign-ins from one remote address (any
	// usernames) lock it for 1 minute, doubling up to one hour; 15 minutes
	// without a failure clear it. A success takes back only its own attempt,
	// so signing in to one's own account cannot hide guesses at others.
	AddressThrottle = ThrottleRule{Limit: 20, Base: time.Minute, Max: time.Hour, Forget: 15 * time.Minute}
)

// Lock answers how long a key with that many counted failures stays locked
// after its latest failure: 0 below Limit, then Base·2^(failures−Limit),
// at most Max.
func (r ThrottleRule) Lock(failures int) time.Duration {
	if failures < r.Limit {
		return 0
	}
	d := r.Base
	for i := r.Limit; i < failures && d < r.Max; i++ {
		d *= 2
	}
	if d > r.Max {
		d = r.Max
	}
	return d
}

// throttleKey is one counted key of a sign-in attempt.
type throttleKey struct {
	key   string
	rule  ThrottleRule
	field string // the request field a lock is reported on
	what  string // how the 429 names it
}

// signInKeys answers the keys a sign-in attempt is counted under: the
// (lower-case) username and, when known, the remote address.
func signInKeys(username, remote string) []throttleKey {
	keys := []throttleKey{{key: "user:" + username, rule: UsernameThrottle, field: "username",
		what: fmt.Sprintf("username %q", username)}}
	if remote != "" {
		keys = append(keys, addressKey(remote))
	}
	return keys
}

// addressKey is the throttle key of a remote address (AddressThrottle).
func addressKey(remote string) throttleKey {
	return throttleKey{key: "addr:" + remote, rule: AddressThrottle, what: "your address"}
}

// RemoteHost answers the host part of an http.Request.RemoteAddr
// ("203.0.113.7:51234" → "203.0.113.7"), or the whole value when it has no
// port. Behind a reverse proxy this is the proxy's address.
func RemoteHost(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return strings.TrimSpace(remoteAddr)
}

// Attempts in flight (docs/API.md "Sign-in throttling"). An attempt is
// held as a reservation under "inflight:<key>" from its start until its
// password was checked, so parallel guesses cannot all run before their
// failures are counted; only a failure is then counted under the key
// itself, and a success never is.
const (
	// SignInReservationTTL is how long a reservation counts when its
	// attempt never finished (the process stopped during the check).
	SignInReservationTTL = time.Minute
	// SignInBusyRetry is the Retry-After of a refusal for attempts in
	// flight: they end within moments.
	SignInBusyRetry = time.Second
)

// inFlightKey is the key under which the attempts in flight of key are
// held.
func inFlightKey(key string) string { return "inflight:" + key }

// busyMessage answers the refusal text for attempts in flight under k.
func (k throttleKey) busyMessage() string {
	if k.field == "" { // the address
		return "too many sign-ins at once from your address; try again in a moment"
	}
	return "too many sign-ins at once for this username; try again in a moment"
}

// admitSignIn refuses an attempt on a locked key with 429
// sign_in_throttled (Retry-After: the rest of the lock), and an attempt
// that would let more than the rule's Limit of failures and attempts in
// flight run at once with 429 sign_in_busy (Retry-After SignInBusyRetry).
// Otherwise it reserves the attempt under every key before the password
// is checked, in one transaction: concurrent guesses are reserved one after
// another and cannot all slip past the limit. A refused attempt is neither
// reserved nor counted, so it does not lengthen the lock. Every admitted
// attempt must end with finishSignIn.
func (s *Service) admitSignIn(ctx context.Context, keys []throttleKey) error {
	return s.Write(ctx, func(tx *Tx) error {
		for _, k := range keys {
			failures := 0
			row, err := tx.LoginThrottle(ctx, k.key)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			default:
				if tx.Now.Sub(row.LastFailure) < k.rule.Forget {
					failures = row.Failures
				}
				until := row.LastFailure.Add(k.rule.Lock(failures))
				if tx.Now.Before(until) {
					wait := until.Sub(tx.Now)
					return &Error{Kind: KindRateLimited, Code: "sign_in_throttled", Field: k.field, RetryAfter: wait,
						Message:    fmt.Sprintf("too many failed sign-ins for %s; sign-in is locked for %d more seconds", k.what, RetrySeconds(wait)),
						Suggestion: fmt.Sprintf("wait %d seconds before trying again; if you forgot the password, ask an admin to reset it", RetrySeconds(wait))}
				}
			}
			inFlight := 0
			held, err := tx.LoginThrottle(ctx, inFlightKey(k.key))
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			default:
				if tx.Now.Sub(held.LastFailure) < SignInReservationTTL {
					inFlight = held.Failures
				}
			}
			if inFlight > 0 && failures+inFlight >= k.rule.Limit {
				return &Error{Kind: KindRateLimited, Code: "sign_in_busy", Field: k.field, RetryAfter: SignInBusyRetry,
					Message:    k.busyMessage(),
					Suggestion: fmt.Sprintf("wait %d second and sign in again; nothing is locked", RetrySeconds(SignInBusyRetry))}
			}
		}
		for _, k := range keys {
			if err := tx.CountLoginAttempt(ctx, inFlightKey(k.key), tx.Now, tx.Now.Add(-SignInReservationTTL)); err != nil {
				return err
			}
		}
		return tx.DeleteStaleLoginThrottles(ctx, tx.Now.Add(-maxForget()))
	})
}

func maxForget() time.Duration {
	if UsernameThrottle.Forget > AddressThrottle.Forget {
		return UsernameThrottle.Forget
	}
	return AddressThrottle.Forget
}

// finishSignIn ends an attempt admitSignIn admitted: it releases the
// attempt's reservation under every key and, when succeeded, clears the
// username's (or known device's) count, else counts one failure under
// every key. It runs even when the request's context has ended, so a
// reservation is never left behind by a client that went away.
func (s *Service) finishSignIn(ctx context.Context, keys []throttleKey, succeeded bool) {
	ctx = context.WithoutCancel(ctx)
	err := s.Write(ctx, func(tx *Tx) error {
		for _, k := range keys {
			if err := tx.ForgiveLoginAttempt(ctx, inFlightKey(k.key)); err != nil {
				return err
			}
			var err error
			switch {
			case !succeeded:
				err = tx.CountLoginAttempt(ctx, k.key, tx.Now, tx.Now.Add(-k.rule.Forget))
			case k.rule == UsernameThrottle: // the username's or the known device's own count
				err = tx.ClearLoginThrottle(ctx, k.key)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.Log.Warn("finish sign-in attempt", "succeeded", succeeded, "err", err)
	}
}

// SignInFrom is where a sign-in attempt comes from: Remote is the remote
// address (RemoteHost of the request; "" counts no address), Device the
// token of the agentmail_device cookie the client presented ("" for none).
type SignInFrom struct {
	Remote string
	Device string
}

// SignIn is a successful sign-in: Cookie is the agentmail_session value to
// set; Device, when not "", is a new device token to set as the
// agentmail_device cookie (DeviceCookieTTL); Response is the login answer
// with the CSRF token.
type SignIn struct {
	Cookie   string
	Device   string
	Response *client.LoginResponse
}

// Known devices (device cookies, migration 0047). A sign-in from a browser
// or client that signed in to the same account before is counted under
// that device (DeviceThrottle) instead of the username, so an attacker's
// failed guesses for a username lock out new clients only, never the
// person's own browser.
const (
	// DeviceCookieTTL is how long a device stays known after its last
	// successful sign-in.
	DeviceCookieTTL = 180 * 24 * time.Hour
	// MaxKnownDevices is how many devices are kept per person; the least
	// recently used are forgotten first.
	MaxKnownDevices = 20
)

// DeviceThrottle is UsernameThrottle applied to one known device of one
// person: five failures in a row from that browser lock it alone.
var DeviceThrottle = UsernameThrottle

// knownDeviceKey answers the hash of the device token when it is a known
// device of username, else "".
func (s *Service) knownDeviceKey(ctx context.Context, username, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	h := HashToken(token)
	d, err := s.Read().GetKnownDevice(ctx, h)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if d.Username != username || s.Now().Sub(d.LastUsedAt) >= DeviceCookieTTL {
		return "", nil
	}
	return h, nil
}

// Login checks a username and password from where a sign-in comes from and
// opens a cookie session. A known device of that person (from.Device) is
// counted under the device instead of the username; a sign-in from any
// other client gets a new device token in the answer.
//
// Errors: 400 field username when it is empty; 401 invalid_credentials for
// an unknown username or a wrong password (the same answer, so names cannot
// be probed); 401 account_disabled; 429 sign_in_throttled with Retry-After
// while the username (for a client that is not a known device), the known
// device or the address is locked (UsernameThrottle, DeviceThrottle,
// AddressThrottle), even for the right password; 429 sign_in_busy
// (Retry-After 1 second, nothing locked) while as many attempts are in
// flight as could reach the lock. The username is compared
// in lower case (NormalizeName).
func (s *Service) Login(ctx context.Context, req client.LoginRequest, from SignInFrom) (*SignIn, error) {
	req.Username = NormalizeName(req.Username)
	if r := []rune(req.Username); len(r) > maxNameRunes {
		// No name is longer (address.ValidName): it signs in nobody, and
		// the throttle stores no more of it than of a real name.
		req.Username = string(r[:maxNameRunes+1])
	}
	if req.Username == "" {
		return nil, Invalid("username", "username is required", "send {\"username\":..., \"password\":...}")
	}
	device, err := s.knownDeviceKey(ctx, req.Username, from.Device)
	if err != nil {
		return nil, err
	}
	var keys []throttleKey
	if device != "" {
		keys = append(keys, throttleKey{key: "device:" + device, rule: DeviceThrottle, field: "username",
			what: fmt.Sprintf("username %q from this browser", req.Username)})
		if from.Remote != "" {
			keys = append(keys, addressKey(from.Remote))
		}
	} else {
		keys = signInKeys(req.Username, from.Remote)
	}
	if err := s.admitSignIn(ctx, keys); err != nil {
		return nil, err
	}
	cookie, resp, err := s.login(ctx, req)
	s.finishSignIn(ctx, keys, err == nil)
	if err != nil {
		return nil, err
	}
	out := &SignIn{Cookie: cookie, Response: resp}
	token := ""
	if device == "" {
		token = RandomToken("")
		device = HashToken(token)
	}
	err = s.Write(ctx, func(tx *Tx) error {
		if err := tx.RememberDevice(ctx, store.KnownDevice{TokenHash: device, Username: resp.Username,
			CreatedAt: tx.Now, LastUsedAt: tx.Now}, MaxKnownDevices); err != nil {
			return err
		}
		return tx.DeleteStaleKnownDevices(ctx, tx.Now.Add(-DeviceCookieTTL))
	})
	if err != nil {
		s.Log.Warn("remember sign-in device", "username", req.Username, "err", err)
	} else {
		out.Device = token
	}
	return out, nil
}
