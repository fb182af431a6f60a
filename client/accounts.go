package client

import "context"

// Login opens a cookie session (POST /api/v1/auth/login). The gateway sets
// the HttpOnly session cookie, kept in the client's cookie jar (one is added
// when the client has none), and the answer's CSRF token is stored and sent
// as X-CSRF-Token on every later write. Errors: 401 invalid_credentials for
// a wrong username or password, 401 account_disabled for a disabled
// account, 429 sign_in_throttled (RetryAfterSeconds set) after repeated
// failures for the username or from the caller's address, 429 sign_in_busy
// (RetryAfterSeconds 1, nothing locked) while too many sign-ins for it run
// at once.
func (c *Client) Login(ctx context.Context, req LoginRequest) (*LoginResponse, error) {
	c.ensureJar()
	var out LoginResponse
	if err := c.postJSON(ctx, apiPath("/auth/login"), req, &out); err != nil {
		return nil, err
	}
	c.setCSRF(out.CSRFToken)
	return &out, nil
}

// Logout ends the cookie session (POST /api/v1/auth/logout, 204) and forgets
// the CSRF token.
func (c *Client) Logout(ctx context.Context) error {
	err := c.postJSON(ctx, apiPath("/auth/logout"), nil, nil)
	c.setCSRF("")
	return err
}

// Me answers GET /api/v1/me: who the caller is and how it authenticated.
// For a cookie session the answer's CSRF token is stored like Login's, so a
// client that restored a session cookie can write again.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	var out Me
	if err := c.getJSON(ctx, apiPath("/me"), nil, &out); err != nil {
		return nil, err
	}
	if out.CSRFToken != "" {
		c.setCSRF(out.CSRFToken)
	}
	return &out, nil
}

// ChangePassword changes the caller's own password (POST
// /api/v1/me/password, 204). The caller's other cookie sessions end; a
// cookie session making the call stays signed in, and user keys keep
// working. Errors: 400 field new_password (shorter than 8 characters) or
// current_password (missing, or code wrong_password when it is not the
// password in force), 401, 403 for an agent key, 429 sign_in_throttled
// after repeated wrong current passwords, 429 sign_in_busy while too many
// checks for the account run at once.
func (c *Client) ChangePassword(ctx context.Context, req ChangePasswordRequest) error {
	return c.postJSON(ctx, apiPath("/me/password"), req, nil)
}

// CreateUserKey creates a user key for the caller (POST /api/v1/me/keys,
// 201). The answer's KeyToken is shown this once only. Errors: 400 with
// field "lifecycle" or "expires_at" (expires_at required exactly for
// "timed").
func (c *Client) CreateUserKey(ctx context.Context, req CreateUserKeyRequest) (*CreatedKey, error) {
	return postAs[CreatedKey](ctx, c, apiPath("/me/keys"), req)
}

// ListUserKeys lists the caller's user keys (GET /api/v1/me/keys); tokens
// are never returned, only their prefixes.
func (c *Client) ListUserKeys(ctx context.Context) (*KeyList, error) {
	return getAs[KeyList](ctx, c, apiPath("/me/keys"), nil)
}

// DeleteUserKey revokes one of the caller's user keys
// (DELETE /api/v1/me/keys/{key_id}, 204; 404 for an unknown id).
func (c *Client) DeleteUserKey(ctx context.Context, keyID string) error {
	return c.delete(ctx, apiPath("/me/keys/%s", keyID))
}

// CreateAgentKey registers (KeyToken set: a client-generated token, seed
// 9.9) or issues (KeyToken empty: returned once in the answer) an agent key
// (POST /api/v1/admin/agent-keys, 201, admins only).
func (c *Client) CreateAgentKey(ctx context.Context, req CreateAgentKeyRequest) (*CreatedKey, error) {
	return postAs[CreatedKey](ctx, c, apiPath("/admin/agent-keys"), req)
}

// ListAgentKeys lists every agent key (GET /api/v1/admin/agent-keys, admins).
func (c *Client) ListAgentKeys(ctx context.Context) (*KeyList, error) {
	return getAs[KeyList](ctx, c, apiPath("/admin/agent-keys"), nil)
}

// DeleteAgentKey revokes an agent key
// (DELETE /api/v1/admin/agent-keys/{key_id}, 204, admins).
func (c *Client) DeleteAgentKey(ctx context.Context, keyID string) error {
	return c.delete(ctx, apiPath("/admin/agent-keys/%s", keyID))
}

// AdminListUserKeys lists every person's user keys
// (GET /api/v1/admin/user-keys, admins).
func (c *Client) AdminListUserKeys(ctx context.Context) (*KeyList, error) {
	return getAs[KeyList](ctx, c, apiPath("/admin/user-keys"), nil)
}

// AdminDeleteUserKey revokes any person's user key
// (DELETE /api/v1/admin/user-keys/{key_id}, 204, admins).
func (c *Client) AdminDeleteUserKey(ctx context.Context, keyID string) error {
	return c.delete(ctx, apiPath("/admin/user-keys/%s", keyID))
}

// AdminListUsers lists the accounts (GET /api/v1/admin/users, admins).
func (c *Client) AdminListUsers(ctx context.Context) (*UserList, error) {
	return getAs[UserList](ctx, c, apiPath("/admin/users"), nil)
}

// AdminCreateUser creates an account (POST /api/v1/admin/users, 201,
// admins). Errors: 400 field "password" (under 8 characters) or "role";
// 409 when the name is taken by a person or an agent.
func (c *Client) AdminCreateUser(ctx context.Context, req CreateUserRequest) (*User, error) {
	return postAs[User](ctx, c, apiPath("/admin/users"), req)
}

// AdminUpdateUser disables, re-enables, resets the password of or changes
// the role of an account (PATCH /api/v1/admin/users/{username}, admins);
// only the fields set change.
func (c *Client) AdminUpdateUser(ctx context.Context, username string, req UpdateUserRequest) (*User, error) {
	return patchAs[User](ctx, c, apiPath("/admin/users/%s", username), req)
}

// AdminListAgents lists every agent (GET /api/v1/admin/agents, admins).
func (c *Client) AdminListAgents(ctx context.Context) (*AgentList, error) {
	return getAs[AgentList](ctx, c, apiPath("/admin/agents"), nil)
}

// AdminUpdateAgent changes an agent's default round budget
// (PATCH /api/v1/admin/agents/{name}, admins).
func (c *Client) AdminUpdateAgent(ctx context.Context, name string, req UpdateAgentRequest) (*Agent, error) {
	return patchAs[Agent](ctx, c, apiPath("/admin/agents/%s", name), req)
}

// AdminGetAgentModels returns an agent's model catalogue and allowed list
// (GET /api/v1/admin/agents/{name}/models, admins).
func (c *Client) AdminGetAgentModels(ctx context.Context, name string) (*AgentDetail, error) {
	return getAs[AgentDetail](ctx, c, apiPath("/admin/agents/%s/models", name), nil)
}

// AdminSetAgentModels sets an agent's allowed models in priority order, or
// removes the list with ModelsUnrestricted true
// (PUT /api/v1/admin/agents/{name}/models, admins). It sends the
// SetAllowedModelsRequest of req: the list alone (a nil list is sent as
// missing: a 400), or models_unrestricted alone (with a non-empty list
// too, which the gateway refuses).
func (c *Client) AdminSetAgentModels(ctx context.Context, name string, req AllowedModels) (*AllowedModels, error) {
	body := SetAllowedModelsRequest{ModelsUnrestricted: req.ModelsUnrestricted}
	if req.AllowedModels != nil && (!req.ModelsUnrestricted || len(req.AllowedModels) > 0) {
		body.AllowedModels = &req.AllowedModels
	}
	return putAs[AllowedModels](ctx, c, apiPath("/admin/agents/%s/models", name), body)
}

// AdminGetMail reads any mail by id (GET /api/v1/admin/mail/{id}, admins):
// the explicit admin read; the admin's own mailbox routes stay scoped.
func (c *Client) AdminGetMail(ctx context.Context, id string) (*Mail, error) {
	return getAs[Mail](ctx, c, apiPath("/admin/mail/%s", id), nil)
}

// UpdateMe sets the caller's email address or notification preference
// (PATCH /api/v1/me, issue 20) and answers the caller's Me. A new address
// is confirmed with VerifyEmail. Errors: 400 field "email" or
// "email_notify", 409 email_taken, 429 email_code_throttled, 503
// email_unavailable when the gateway sends no email.
func (c *Client) UpdateMe(ctx context.Context, req UpdateMeRequest) (*Me, error) {
	return patchAs[Me](ctx, c, apiPath("/me"), req)
}

// VerifyEmail confirms the pending address with the mailed code or link
// token (POST /api/v1/me/email/verify) and answers the caller's Me.
// Errors: 400 wrong_code, 409 no_email_pending, email_code_expired,
// email_code_exhausted, email_taken.
func (c *Client) VerifyEmail(ctx context.Context, req VerifyEmailRequest) (*Me, error) {
	return postAs[Me](ctx, c, apiPath("/me/email/verify"), req)
}
