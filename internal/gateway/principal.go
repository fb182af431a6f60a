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
)

// Roles of people.
const (
	RoleAdmin = "admin"
	RoleUser  = "user"
)

// Principal is who a request acts for, as established by authentication:
// a person (cookie or user key) or an agent (agent key). The sender of a
// mail is always the principal's Name (an agent cannot send as another).
type Principal struct {
	Kind      string // PrincipalPerson | PrincipalAgent
	Name      string // username or agent name
	Role      string // people: RoleAdmin | RoleUser
	AuthKind  string // AuthCookie | AuthUserKey | AuthAgentKey
	KeyID     string // for key auth
	CSRFToken string // for cookie auth
	CookieID  string // hash of the cookie value, for logout
}

// IsPerson reports a person.
func (p *Principal) IsPerson() bool { return p != nil && p.Kind == PrincipalPerson }

// IsAgent reports an agent.
func (p *Principal) IsAgent() bool { return p != nil && p.Kind == PrincipalAgent }

// IsAdmin reports a person with the admin role.
func (p *Principal) IsAdmin() bool { return p.IsPerson() && p.Role == RoleAdmin }
