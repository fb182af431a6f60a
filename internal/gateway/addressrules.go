package gateway

import (
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// checkRecipientPath enforces the path part of an address once the name's
// kind is known (field names the request field: "to", "cc", "address",
// "recipients"):
//
//   - a person has no path: `ann@/tmp` is a 400 person_path (people are
//     addressed as `ann` or `ann@.alias`);
//   - an agent's path is the directory it works in (W-4 to_workspace), so it
//     must be absolute: `claude@tmp/proj.new` is a 400 relative_path (the
//     bridge would refuse a relative to_workspace anyway, D-6.3; the seed's
//     `pi@root` example is therefore refused too);
//   - an agent address with an empty path (`claude`, `claude@`,
//     `claude@.new`) is a 400 missing_path, except with an alias
//     (`claude@.fix-leak`: the alias names the session and with it the
//     path; the gateway itself writes such reply addresses for an agent that
//     opened a session without a path) and in a reply (reply is true: the
//     replied mail's session and the agent's path in it are used).
func checkRecipientPath(a address.Address, kind, field string, reply bool) error {
	switch {
	case kind == store.KindPerson && a.Path != "":
		return InvalidCode("person_path", field,
			fmt.Sprintf("%s: %s is a person, and people have no path", a.String(), a.Name),
			fmt.Sprintf("people are addressed as %s or %s@.alias", a.Name, a.Name))
	case kind != store.KindAgent:
		return nil
	case a.Path == "" && a.Session == address.SessionNew:
		return InvalidCode("missing_path", field,
			fmt.Sprintf("%s: %s is an agent; a new session needs a path: the absolute path of the directory to work in", a.String(), a.Name),
			fmt.Sprintf("write %s@/path/to/workspace.new", a.Name))
	case a.Path == "" && a.Session == address.SessionDefault && !reply:
		return InvalidCode("missing_path", field,
			fmt.Sprintf("%s: %s is an agent; its address needs a path: the absolute path of the directory to work in", a.String(), a.Name),
			fmt.Sprintf("write %s@/path/to/workspace (add .new or .alias after the path)", a.Name))
	case a.Path != "" && !strings.HasPrefix(a.Path, "/"):
		return InvalidCode("relative_path", field,
			fmt.Sprintf("%s: the path %q is not absolute; an agent's path is the directory it works in", a.String(), a.Path),
			fmt.Sprintf("use an absolute path, e.g. %s@/tmp/proj", a.Name))
	}
	return nil
}
