package gateway

// Principal kinds.
const (
	PrincipalPerson = "person"
	PrincipalAgent  = "agent"
)

// Auth kinds.
const (
	AuthCookie   = "cookie"
	AuthUserKey  = "user_key"
	AuthAgentKey = "agent_key"
	// AuthTurnToken is a per-turn token (turntokens.go): the agent, within
	// one session only.
	AuthTurnToken = "turn_token"
)

// Roles of people.
const (
	RoleAdmin = "admin"
	RoleUser  = "user"
)

// Principal is who a request acts for, as established by authentication:
// a person (cookie or user key) or an agent (agent key or turn token). The
// sender of a mail is always the principal's Name (an agent cannot send as
// another). A turn token's principal carries TurnSession, the one session
// it may act in (visibility.go inTurnScope applies it).
type Principal struct {
	Kind     string // PrincipalPerson | PrincipalAgent
	Name     string // username or agent name
	Role     string // people: RoleAdmin | RoleUser
	AuthKind string // AuthCookie | AuthUserKey | AuthAgentKey | AuthTurnToken
	KeyID    string // for key auth; for a turn token its token_id
	// TurnSession is the session a turn token is bound to; "" for every
	// other kind of authentication.
	TurnSession string
	CSRFToken   string // for cookie auth
	CookieID    string // hash of the cookie value, for logout
}

// IsPerson reports a person.
func (p *Principal) IsPerson() bool { return p != nil && p.Kind == PrincipalPerson }

// IsAgent reports an agent.
func (p *Principal) IsAgent() bool { return p != nil && p.Kind == PrincipalAgent }

// IsAdmin reports a person with the admin role.
func (p *Principal) IsAdmin() bool { return p.IsPerson() && p.Role == RoleAdmin }

// IsTurnToken reports an agent authenticated with a per-turn token.
func (p *Principal) IsTurnToken() bool { return p.IsAgent() && p.AuthKind == AuthTurnToken }
