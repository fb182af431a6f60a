package gateway

import (
	"fmt"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
)

// Length bounds of text people and agents hand the gateway to keep (trust
// boundary): each is stored, shown to people and models, and copied into
// events and exports, so none may be as long as a request body allows. A
// longer value is a 400 invalid_field naming the field, as every other
// bound of a field (subjects, workspaces, labels, reasons …, checked where
// those fields are); nothing of the request is stored. Lengths are in
// characters (runes).
const (
	// MaxModelRunes bounds a heartbeat model's provider, model and
	// display_name, and a run's model.
	MaxModelRunes = client.MaxModelRunes
	// MaxHeartbeatModels bounds a heartbeat's model catalogue.
	MaxHeartbeatModels = client.MaxHeartbeatModels
	// MaxPlatformIDRunes bounds a heartbeat platform session's
	// platform_id (PUT /sessions/{id}/platform-session allows 512 bytes).
	MaxPlatformIDRunes = client.MaxPlatformIDRunes
	// MaxSlugRunes bounds a heartbeat platform session's slug.
	MaxSlugRunes = client.MaxSlugRunes
	// MaxAliasInputRunes bounds an alias as sent (PATCH /me/sessions/{id},
	// POST /sessions/{id}/sync, a send's session_alias), before it is
	// reduced to an alias.
	MaxAliasInputRunes = 200
	// MaxRunErrorRunes bounds a run's error.
	MaxRunErrorRunes = client.MaxRunErrorRunes
	// maxNameRunes is the longest person or agent name (address.ValidName).
	maxNameRunes = 64
)

// DefaultMaxSessionsPerOwner is Config.MaxSessionsPerOwner's default: far
// above what a person or an agent opens in years (an agent opens at most
// NewSessionLimit an hour), it only stops a runaway script or a stolen key
// from filling the database with sessions.
const DefaultMaxSessionsPerOwner = 100000

// tooLong answers the 400 for field when v has more than max characters,
// else nil.
func tooLong(field, v string, max int) error {
	if n := utf8.RuneCountInString(v); n > max {
		return Invalid(field, fmt.Sprintf("%s has %d characters, at most %d", field, n, max),
			fmt.Sprintf("shorten %s to %d characters", field, max))
	}
	return nil
}
