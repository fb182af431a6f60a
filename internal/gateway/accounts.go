package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// MinPasswordLength is the shortest password accepted for a person.
const MinPasswordLength = 8

// dummyHash is a real bcrypt hash at the service's cost, compared against
// when the username is unknown.
func (s *Service) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		s.dummy, _ = bcrypt.GenerateFromPassword([]byte("not a password"), s.Config.BcryptCost)
	})
	return s.dummy
}

// HashToken answers the stored form of a bearer token or cookie value:
// SHA-256, hex. Tokens are random and long, so a fast hash is enough.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// RandomToken answers a random URL-safe token with the given prefix and
// 32 random bytes.
func RandomToken(prefix string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// GeneratedPassword answers a new random 20-character password of base64url
// letters that neither starts nor ends with '-' or '_' (issue 18 point 13:
// a password starting with '-' reads as a flag when pasted into a command,
// and one at either end is easily lost when copied). About 115 bits.
func GeneratedPassword() string {
	for {
		p := RandomToken("")[:20]
		if strings.Trim(p, "-_") == p {
			return p
		}
	}
}

// BootstrapAdmin creates the first admin when no account exists yet. With
// password "" a random one is generated; the answer then holds it so the
// caller can print it once. created is false when accounts already existed
// (nothing is changed then). Issue 2 item 2.
func (s *Service) BootstrapAdmin(ctx context.Context, username, password string) (created bool, generated string, err error) {
	username = NormalizeName(username)
	if username == "" {
		username = BootstrapOnlyName
	}
	if err := address.ValidName(username); err != nil {
		return false, "", Invalid("ADMIN_USER", err.Error(), "use letters, digits, '-' and '_'")
	}
	if err := checkReservedName("ADMIN_USER", username, true); err != nil {
		return false, "", err
	}
	n, err := s.Read().CountUsers(ctx)
	if err != nil || n > 0 {
		return false, "", err
	}
	if password == "" {
		generated = GeneratedPassword()
		password = generated
	}
	_, err = s.createUser(ctx, client.CreateUserRequest{Username: username, Password: password, Role: RoleAdmin}, true)
	if err != nil {
		// Another replica starting on the same database at the same moment
		// created the first admin: there is nothing left to do.
		if e := AsError(err); e != nil && e.Code == "name_taken" {
			if n, cerr := s.Read().CountUsers(ctx); cerr == nil && n > 0 {
				return false, "", nil
			}
		}
		return false, "", err
	}
	return true, generated, nil
}

// CreateUser creates a person account (POST /admin/users). The name is
// stored in lower case (NormalizeName) and claimed in the shared name
// space: a clash with a person or an agent, in any case, is a 409
// name_taken; a name that looks like an existing person's or agent's
// (same NameSkeleton: "bоb", "ｂob" next to "bob") is a 409
// name_confusable naming it; one mixing alphabets (NameScripts) is a 400
// name_mixed_scripts; a reserved name (ReservedNames, "admin", or one
// looking like them) is a 400 reserved_name.
func (s *Service) CreateUser(ctx context.Context, req client.CreateUserRequest) (*client.User, error) {
	return s.createUser(ctx, req, false)
}

// createUser is CreateUser; bootstrap allows the name "admin".
func (s *Service) createUser(ctx context.Context, req client.CreateUserRequest, bootstrap bool) (*client.User, error) {
	req.Username = NormalizeName(req.Username)
	if err := address.ValidName(req.Username); err != nil {
		return nil, Invalid("username", err.Error(), "use 1-64 letters, digits, '-' or '_'")
	}
	if err := checkReservedName("username", req.Username, bootstrap); err != nil {
		return nil, err
	}
	if len(req.Password) < MinPasswordLength {
		return nil, Invalid("password", fmt.Sprintf("password must have at least %d characters", MinPasswordLength), "choose a longer password")
	}
	role := req.Role
	if role == "" {
		role = RoleUser
	}
	if role != RoleUser && role != RoleAdmin {
		return nil, Invalid("role", fmt.Sprintf("role %q is not one of admin, user", role), `use "admin" or "user"`)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(req.Password), s.Config.BcryptCost)
	if err != nil {
		return nil, Invalid("password", "password cannot be hashed: "+err.Error(), "use at most 72 bytes")
	}
	var u store.UserRow
	err = s.Write(ctx, func(tx *Tx) error {
		ok, err := claimNewName(ctx, tx, "username", req.Username, store.KindPerson)
		if err != nil {
			return err
		}
		if !ok {
			return Conflict("name_taken", fmt.Sprintf("the name %q is already used by a person or an agent", req.Username), "choose another name")
		}
		u = store.UserRow{Username: req.Username, PasswordHash: string(hash), Role: role, CreatedAt: tx.Now}
		return tx.InsertUser(ctx, u)
	})
	if err != nil {
		return nil, err
	}
	return userView(u), nil
}

func userView(u store.UserRow) *client.User {
	return &client.User{Username: u.Username, Role: u.Role, Disabled: u.Disabled, CreatedAt: u.CreatedAt}
}

// ListUsers answers every account (admin).
func (s *Service) ListUsers(ctx context.Context) (*client.UserList, error) {
	rows, err := s.Read().ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := &client.UserList{Users: []client.User{}}
	for _, u := range rows {
		out.Users = append(out.Users, *userView(u))
	}
	return out, nil
}

// UpdateUser changes disabled, password or role (admin). Disabling or a new
// password ends the user's cookie sessions. An admin cannot remove their own
// admin role or disable themselves (so the system keeps an admin).
func (s *Service) UpdateUser(ctx context.Context, actor *Principal, username string, req client.UpdateUserRequest) (*client.User, error) {
	username = NormalizeName(username)
	var hash []byte
	if req.Password != nil {
		if len(*req.Password) < MinPasswordLength {
			return nil, Invalid("password", fmt.Sprintf("password must have at least %d characters", MinPasswordLength), "choose a longer password")
		}
		var err error
		if hash, err = bcrypt.GenerateFromPassword([]byte(*req.Password), s.Config.BcryptCost); err != nil {
			return nil, Invalid("password", "password cannot be hashed: "+err.Error(), "use at most 72 bytes")
		}
	}
	if req.Role != nil && *req.Role != RoleUser && *req.Role != RoleAdmin {
		return nil, Invalid("role", fmt.Sprintf("role %q is not one of admin, user", *req.Role), `use "admin" or "user"`)
	}
	if actor != nil && actor.Name == username {
		if req.Disabled != nil && *req.Disabled {
			return nil, Invalid("disabled", "you cannot disable your own account", "ask another admin")
		}
		if req.Role != nil && *req.Role != RoleAdmin {
			return nil, Invalid("role", "you cannot remove your own admin role", "ask another admin")
		}
	}
	var u store.UserRow
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		u, err = tx.GetUser(ctx, username)
		if errors.Is(err, store.ErrNotFound) {
			return NotFound("user_not_found", fmt.Sprintf("no person named %q", username), "list users with GET /api/v1/admin/users")
		}
		if err != nil {
			return err
		}
		endSessions := false
		if req.Disabled != nil {
			u.Disabled = *req.Disabled
			endSessions = endSessions || u.Disabled
		}
		if req.Role != nil {
			u.Role = *req.Role
		}
		if hash != nil {
			u.PasswordHash = string(hash)
			endSessions = true
		}
		if err := tx.UpdateUser(ctx, u); err != nil {
			return err
		}
		if endSessions {
			return tx.DeleteUserAuthSessions(ctx, username)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.keys.invalidate() // cached keys carry the person's role and disabled flag (keycache.go)
	return userView(u), nil
}

// login checks a username (already normalised) and password and opens a
// cookie session, without the throttling Login adds. A wrong name or
// password is the same 401.
func (s *Service) login(ctx context.Context, req client.LoginRequest) (cookie string, resp *client.LoginResponse, err error) {
	bad := Unauthorized("invalid_credentials", "unknown username or wrong password")
	u, err := s.Read().GetUser(ctx, req.Username)
	if errors.Is(err, store.ErrNotFound) {
		// Spend the same time as a real check so names cannot be probed.
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(req.Password))
		return "", nil, bad
	}
	if err != nil {
		return "", nil, err
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(req.Password)) != nil {
		return "", nil, bad
	}
	if u.Disabled {
		return "", nil, accountDisabled("this account")
	}
	cookie = RandomToken("")
	csrf := RandomToken("")
	err = s.Write(ctx, func(tx *Tx) error {
		return tx.InsertAuthSession(ctx, store.AuthSessionRow{IDHash: HashToken(cookie), Username: u.Username, CSRFToken: csrf,
			CreatedAt: tx.Now, ExpiresAt: tx.Now.Add(s.Config.CookieTTL), LastUsedAt: tx.Now})
	})
	if err != nil {
		return "", nil, err
	}
	return cookie, &client.LoginResponse{Username: u.Username, Role: u.Role, CSRFToken: csrf}, nil
}

// Logout ends the cookie session with that cookie hash.
func (s *Service) Logout(ctx context.Context, cookieHash string) error {
	return s.Write(ctx, func(tx *Tx) error { return tx.DeleteAuthSession(ctx, cookieHash) })
}

// CheckCookieActive answers nil while the cookie session whose hash is
// cookieID (Principal.CookieID) still signs its person in, else the 401
// AuthCookie would answer: session_expired when it signed out, a password
// change ended it or it expired, account_disabled when the account was
// disabled. It touches nothing: an open event stream checks its sign-in
// with it at each heartbeat.
func (s *Service) CheckCookieActive(ctx context.Context, cookieID string) error {
	sess, u, err := s.Read().GetAuthSession(ctx, cookieID)
	if errors.Is(err, store.ErrNotFound) {
		return Unauthorized("session_expired", "your sign-in session is unknown or expired")
	}
	if err != nil {
		return err
	}
	if !s.Now().Before(sess.ExpiresAt) {
		return Unauthorized("session_expired", "your sign-in session expired")
	}
	if u.Disabled {
		return accountDisabled("this account")
	}
	return nil
}

// AuthCookie resolves a cookie value to a person, or a 401. The session's
// expiry slides forward at most once a minute.
func (s *Service) AuthCookie(ctx context.Context, cookie string) (*Principal, error) {
	h := HashToken(cookie)
	sess, u, err := s.Read().GetAuthSession(ctx, h)
	if errors.Is(err, store.ErrNotFound) {
		return nil, Unauthorized("session_expired", "your sign-in session is unknown or expired")
	}
	if err != nil {
		return nil, err
	}
	now := s.Now()
	if !now.Before(sess.ExpiresAt) {
		return nil, Unauthorized("session_expired", "your sign-in session expired")
	}
	if u.Disabled {
		return nil, accountDisabled("this account")
	}
	if now.Sub(sess.LastUsedAt) > time.Minute {
		if err := s.Write(ctx, func(tx *Tx) error {
			return tx.TouchAuthSession(ctx, h, tx.Now, tx.Now.Add(s.Config.CookieTTL))
		}); err != nil {
			s.Log.Warn("touch cookie session", "err", err)
		}
	}
	return &Principal{Kind: PrincipalPerson, Name: u.Username, Role: u.Role, AuthKind: AuthCookie,
		CSRFToken: sess.CSRFToken, CookieID: h}, nil
}

// CheckCSRF compares the token a cookie-authenticated write sent with the
// session's; a mismatch is a 403.
func CheckCSRF(p *Principal, sent string) error {
	if p == nil || p.AuthKind != AuthCookie {
		return nil
	}
	if sent == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(p.CSRFToken)) != 1 {
		return Forbidden("csrf_token_invalid", "a cookie-authenticated write needs the X-CSRF-Token header from the login answer",
			"send X-CSRF-Token: <csrf_token> (GET /api/v1/me answers it again)")
	}
	return nil
}
