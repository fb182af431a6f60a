package gateway

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// ChangePassword sets a person's own password (POST /api/v1/me/password).
//
// current_password must be the password now in force (bcrypt): a wrong one
// is a 400 wrong_password naming current_password and counts as a failed
// sign-in for the username and remote (the same throttle as Login, so a
// stolen cookie cannot be used to guess the password; 429 while locked).
// new_password needs at least MinPasswordLength characters (400 naming
// new_password) and at most 72 bytes (bcrypt's limit). On success every
// other cookie session of the person ends; the session of the request
// (p.CookieID, when it came with a cookie) stays signed in. User keys are
// not touched; revoke them separately (DELETE /api/v1/me/keys/{key_id}).
func (s *Service) ChangePassword(ctx context.Context, p *Principal, req client.ChangePasswordRequest, remote string) error {
	if p == nil || !p.IsPerson() {
		return Forbidden("person_only", "only a person has a password", "")
	}
	if req.CurrentPassword == "" {
		return Invalid("current_password", "current_password is required", "send the password you sign in with now")
	}
	if len(req.NewPassword) < MinPasswordLength {
		return Invalid("new_password", fmt.Sprintf("new_password must have at least %d characters", MinPasswordLength), "choose a longer password")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(req.NewPassword), s.Config.BcryptCost)
	if err != nil {
		return Invalid("new_password", "new_password cannot be hashed: "+err.Error(), "use at most 72 bytes")
	}
	keys := signInKeys(p.Name, remote)
	if err := s.admitSignIn(ctx, keys); err != nil {
		return err
	}
	changed := false
	defer func() { s.finishSignIn(ctx, keys, changed) }()
	u, err := s.Read().GetUser(ctx, p.Name)
	if errors.Is(err, store.ErrNotFound) {
		return Unauthorized("invalid_credentials", "the signed-in account no longer exists")
	}
	if err != nil {
		return err
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(req.CurrentPassword)) != nil {
		return InvalidCode("wrong_password", "current_password", "current_password is not the password of this account",
			"send the password you sign in with now; if you forgot it, ask an admin to reset it")
	}
	if req.NewPassword == req.CurrentPassword {
		return InvalidCode("same_password", "new_password", "new_password is the current password",
			"choose a password you do not use now")
	}
	keep := ""
	if p.AuthKind == AuthCookie {
		keep = p.CookieID
	}
	err = s.Write(ctx, func(tx *Tx) error {
		u, err := tx.GetUser(ctx, p.Name)
		if err != nil {
			return err
		}
		u.PasswordHash = string(hash)
		if err := tx.UpdateUser(ctx, u); err != nil {
			return err
		}
		return tx.DeleteOtherAuthSessions(ctx, p.Name, keep)
	})
	if err != nil {
		return err
	}
	changed = true
	s.Log.Info("password changed", "username", p.Name, "kept_session", keep != "")
	return nil
}
