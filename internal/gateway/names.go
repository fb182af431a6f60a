package gateway

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"go.mau.fi/util/confusable"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/agentmail/agentmail/internal/store"
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

// NameKey answers the form in which two names are compared for being one
// name: NFKC-normalised and case-folded (Unicode full case folding), then
// NFKC again, after trimming spaces. "BOB", "bob" and "ｂｏｂ" (full width)
// share the key "bob"; "Straße" has the key "strasse". The key is for
// comparison only; names are stored and looked up by NormalizeName.
func NameKey(name string) string {
	k := norm.NFKC.String(strings.TrimSpace(name))
	k = cases.Fold().String(k)
	return norm.NFKC.String(k)
}

//go:generate go run ./internal/gensmallcaps -o smallcaps_table.go

// NameSkeleton answers the Unicode confusable skeleton (UTS #39, section
// 4) of NameKey(name): two names with the same skeleton look alike and
// cannot both exist (409 name_confusable, migrations 0014 and 0032).
// Because names are case-insensitive the skeleton is case-folded and
// mapped once more, so "b0b" (digit zero, whose prototype is "O") looks
// like "bob" too. "bob", "bоb" (Cyrillic о) and "ｂob" share the skeleton
// "bob"; "mary" and "rnary" share "rnary". Before and after the mapping
// the name goes through foldLookalikes, for what the confusables table
// does not list: accents and other combining marks are dropped ("admín",
// "bób" and "bob̈" look like "admin", "bob"), and Latin small capitals
// become the lower-case letter ("ʙob" looks like "bob"). The confusables
// data is Unicode 17.0.0's (go.mau.fi/util/confusable); the small capitals
// come from Unicode's character names (smallcaps_table.go). A skeleton is
// never shown to a person.
func NameSkeleton(name string) string {
	sk := confusable.Skeleton(foldLookalikes(NameKey(name)))
	return foldLookalikes(confusable.Skeleton(cases.Fold().String(sk)))
}

// foldLookalikes answers s decomposed (NFD) without its nonspacing marks
// (general category Mn: accents, diaereses, dots, Japanese dakuten) and
// with every Latin small capital replaced by its lower-case letter
// (smallCapitals), composed again (NFC).
func foldLookalikes(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if l, ok := smallCapitals[r]; ok {
			r = l
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

// highlyRestrictiveSets are the script combinations UTS #39 (section 5.2,
// "Highly Restrictive") allows in one identifier besides a single script:
// Latin with Han and Japanese kana, with Han and Bopomofo, or with Han and
// Hangul.
var highlyRestrictiveSets = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// likelyScripts are tried first when looking up a letter's script.
var likelyScripts = []string{"Latin", "Han", "Cyrillic", "Greek", "Hiragana", "Katakana", "Hangul", "Arabic", "Hebrew"}

// runeScript answers the Unicode Script property value of r ("Latin",
// "Cyrillic", ...), or "" for Common and Inherited characters (digits,
// '-', '_', combining marks), which go with any script.
func runeScript(r rune) string {
	if unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r) {
		return ""
	}
	for _, name := range likelyScripts {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for name, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return name
		}
	}
	return "Unknown"
}

// NameScripts answers the scripts of NameKey(name)'s letters, sorted, and
// whether they stay within UTS #39's "highly restrictive" level: one
// script, or a combination in highlyRestrictiveSets. "张san" (Han with
// Latin) and "bob" pass; "bоb" (Latin with Cyrillic о) does not. The
// Script property is used, not Script_Extensions (the Go standard library
// carries only Script), so a character whose extensions name scripts but
// whose Script is Common goes with any script.
func NameScripts(name string) (scripts []string, ok bool) {
	seen := map[string]bool{}
	for _, r := range NameKey(name) {
		if sc := runeScript(r); sc != "" && !seen[sc] {
			seen[sc] = true
			scripts = append(scripts, sc)
		}
	}
	sort.Strings(scripts)
	if len(scripts) <= 1 {
		return scripts, true
	}
	for _, set := range highlyRestrictiveSets {
		all := true
		for _, sc := range scripts {
			if !contains(set, sc) {
				all = false
				break
			}
		}
		if all {
			return scripts, true
		}
	}
	return scripts, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkNameScripts answers a 400 name_mixed_scripts naming field when name
// mixes scripts beyond the highly restrictive level (NameScripts).
func checkNameScripts(field, name string) error {
	scripts, ok := NameScripts(name)
	if ok {
		return nil
	}
	return InvalidCode("name_mixed_scripts", field,
		fmt.Sprintf("the name %q mixes letters of different alphabets (%s), so it can look like another name",
			name, strings.Join(scripts, ", ")),
		"write the name in one alphabet; Latin letters may be mixed only with Chinese, Japanese or Korean characters")
}

// kindWords names a name kind for a person reading an error.
func kindWords(kind string) string {
	switch kind {
	case store.KindAgent:
		return "an existing agent"
	case store.KindPerson:
		return "an existing person"
	}
	return "an existing account"
}

// checkNameConfusable answers a 409 name_confusable naming field when
// another claimed name has the skeleton skel (NameSkeleton of name): the
// message names that existing person or agent. The name itself (an exact
// match, name_taken) is not refused here.
func checkNameConfusable(ctx context.Context, q *store.Q, field, name, skel string) error {
	other, kind, err := q.NameBySkeleton(ctx, skel)
	if errors.Is(err, store.ErrNotFound) || (err == nil && other == name) {
		return nil
	}
	if err != nil {
		return err
	}
	return &Error{Kind: KindConflict, Code: "name_confusable", Field: field,
		Message: fmt.Sprintf("the name %q looks like %q, the name of %s; people could mistake one for the other",
			name, other, kindWords(kind)),
		Suggestion: fmt.Sprintf("choose a name that does not look like %q (other letters, not look-alike letters from another alphabet or full-width forms); to reach %q, use that name itself",
			other, other)}
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
	skel := NameSkeleton(name)
	for _, r := range ReservedNames {
		if name == r {
			return InvalidCode("reserved_name", field, fmt.Sprintf("the name %q is reserved", name), "choose another name")
		}
		if skel == NameSkeleton(r) {
			return InvalidCode("reserved_name", field, fmt.Sprintf("the name %q looks like the reserved name %q", name, r),
				"choose a name that does not look like a reserved one")
		}
	}
	if name != BootstrapOnlyName && skel == NameSkeleton(BootstrapOnlyName) && !bootstrap {
		return InvalidCode("reserved_name", field,
			fmt.Sprintf("the name %q looks like %q, which is reserved for the admin account created at the first start", name, BootstrapOnlyName),
			"choose a name that does not look like a reserved one")
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

// claimNewName claims a new name for kind inside tx, refusing a look-alike
// first: 409 name_confusable when another person's or agent's name has the
// same skeleton (checkNameConfusable), then 400 name_mixed_scripts
// (checkNameScripts). It answers false, with no error, when the name
// itself is taken (the caller words the 409 name_taken). The name's
// skeleton is stored with it, so the database refuses a look-alike
// claimed by a concurrent transaction too.
func claimNewName(ctx context.Context, tx *Tx, field, name, kind string) (bool, error) {
	skel := NameSkeleton(name)
	if err := checkNameConfusable(ctx, tx.Q, field, name, skel); err != nil {
		return false, err
	}
	if err := checkNameScripts(field, name); err != nil {
		return false, err
	}
	ok, err := tx.ClaimNameSkeleton(ctx, name, skel, kind, tx.Now)
	if err != nil || ok {
		return ok, err
	}
	// Refused by the database: the name itself, or a look-alike committed
	// since the check above.
	if err := checkNameConfusable(ctx, tx.Q, field, name, skel); err != nil {
		return false, err
	}
	return false, nil
}

// BackfillNameSkeletons stores the skeleton (NameSkeleton) of every name
// claimed before migration 0014, oldest first. Of older names that already
// look alike the oldest gets the skeleton and the later keep none; they
// stay usable, a warning names them, and new look-alikes of either are
// refused. Run at start; a second run finds nothing to do.
func (s *Service) BackfillNameSkeletons(ctx context.Context) error {
	names, err := s.Read().NamesWithoutSkeleton(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		skel := NameSkeleton(n)
		if skel == "" {
			continue
		}
		var ok bool
		err := s.Write(ctx, func(tx *Tx) error {
			var err error
			ok, err = tx.SetNameSkeleton(ctx, n, skel)
			return err
		})
		if err != nil && !s.Store.Dialect().IsUniqueViolation(err) {
			return fmt.Errorf("store the skeleton of name %q: %w", n, err)
		}
		// A unique violation: another replica starting at the same moment
		// gave the skeleton to an older look-alike first.
		if !ok {
			if other, _, err := s.Read().NameBySkeleton(ctx, skel); err == nil && other != n {
				s.Log.Warn("two names look alike; both were created before look-alike names were refused",
					"name", n, "looks_like", other)
			}
		}
	}
	return nil
}
