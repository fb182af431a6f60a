package gateway

import (
	"fmt"
	"strings"
)

// NormalizeName answers the form a person or agent name is stored and
// compared in: trimmed and lower-case. Names are case-insensitive: "Ann"
// and "ann" are one name (the names table refuses a second one differing
// only in case, migration 0012), and every name that comes in (addresses,
// usernames, agent names, path parameters) is normalised at the boundary,
// so "Claude@/srv" reaches the agent claude.
func NormalizeName(name string) string {
	return strings.ToLower(strings.TrimSpace(name))
}

// ReservedNames are names nobody may take, as a person or as an agent:
// "agentmail" (SystemSender, the sender of reminders and timeout
// decisions), "system" (a sender's kind), "timeout" (decided_by of a
// permission request the clock denied). "admin" is reserved too, except for
// the admin the first start creates (ADMIN_USER, default "admin").
var ReservedNames = []string{SystemSender, "system", DecidedByTimeout}

// BootstrapOnlyName may only be taken by the first admin.
const BootstrapOnlyName = "admin"

// checkReservedName answers a 400 reserved_name naming field when name
// (normalised) is reserved; bootstrap allows BootstrapOnlyName.
func checkReservedName(field, name string, bootstrap bool) error {
	for _, r := range ReservedNames {
		if name == r {
			return InvalidCode("reserved_name", field, fmt.Sprintf("the name %q is reserved", name), "choose another name")
		}
	}
	if name == BootstrapOnlyName && !bootstrap {
		return InvalidCode("reserved_name", field,
			fmt.Sprintf("the name %q is reserved for the admin account created at the first start", name), "choose another name")
	}
	return nil
}

// accountDisabled is the 401 of a disabled person's sign-in, cookie or key
// (what names the credential: "this account", "the key's owner").
func accountDisabled(what string) *Error {
	return &Error{Kind: KindUnauthorized, Code: "account_disabled",
		Message:    what + " is disabled",
		Suggestion: "ask an admin to enable the account again; signing in again will not help"}
}
