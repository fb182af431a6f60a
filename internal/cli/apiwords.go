package cli

import (
	"regexp"
	"strings"

	"github.com/agentmail/agentmail/client"
)

// A gateway answer as a person reads it in the terminal (issue 18 point
// 2): what is wrong and what to do, in the person's language, without the
// API's codes, field names or endpoints. The answers people meet most have
// the CLI's own words (apiWords, by code, and field where one code covers
// several cases); the others show the gateway's message and suggestion,
// which the gateway already writes for people.

// apiWord is the CLI's wording of one kind of answer: text is a format
// for the submatches of match (a regexp over the gateway's message), or
// plain text when match is nil. When match is set and does not match, the
// entry does not apply.
type apiWord struct {
	match *regexp.Regexp
	text  string
}

var quoted = regexp.MustCompile(`"([^"]*)"`)

// apiWords are keyed by "code" or "code/field".
var apiWords = map[string]apiWord{
	"wrong_password/current_password": {text: "the current password is wrong, so nothing was changed\n" +
		"  what to do: type the password you sign in with now; if you forgot it, an admin can reset it on the Admin page"},
	"same_password/new_password": {text: "the new password is the one you have now, so nothing was changed\n" +
		"  what to do: choose a password you do not use yet"},
	"invalid_field/new_password": {match: regexp.MustCompile(`at least (\d+) characters`), text: "the new password is too short, so nothing was changed\n" +
		"  what to do: choose one of at least %s characters"},
	"invalid_credentials": {text: "wrong username or password\n" +
		"  what to do: check both and try again; if you forgot the password, an admin can reset it on the Admin page"},
	"person_only": {text: "this key belongs to an agent, not to a person, and these commands work for a person\n" +
		"  what to do: run agentmail login with your username, or set AGENTMAIL_USER_KEY to a user key (one that starts with amu_; the Account page of the web page creates one)"},
	"invalid_key": {text: "the gateway does not know this key (it may belong to another gateway, or be mistyped)\n" +
		"  what to do: run agentmail login again, or set AGENTMAIL_USER_KEY to a user key of this gateway"},
	"key_revoked": {text: "this user key was revoked\n" +
		"  what to do: run agentmail login again to get a new one"},
	"key_expired": {text: "this user key has expired\n" +
		"  what to do: run agentmail login again to get a new one"},
	"key_used": {text: "this one-time key was used already\n" +
		"  what to do: run agentmail login again to get a lasting one"},
	"missing_key": {text: "the gateway got no key\n" +
		"  what to do: run agentmail login, or set AGENTMAIL_USER_KEY"},
	"permission_not_found": {text: "there is no permission request with this id that you may decide\n" +
		"  what to do: check the id; agentmail watch and agentmail inbox show the ids of the requests that ask you"},
	"permission_expired": {text: "this request has expired, so it was denied\n" +
		"  what to do: nothing can be decided any more; the agent has to ask again"},
	"mail_not_found": {text: "there is no mail with this id in your mailbox\n" +
		"  what to do: check the id; agentmail inbox --all lists your mail"},
	"run_not_found": {text: "there is no run with this id in your conversations\n" +
		"  what to do: check the id; agentmail runs --all lists the runs"},
	"admin_only": {text: "only an admin may do this, and you are not one\n" +
		"  what to do: ask an admin to do it (for an agent's key: agentmail keys register-agent, or Admin → Agent keys on the web page)"},
	"key_not_found": {text: "you have no user key with this id\n" +
		"  what to do: agentmail keys list shows your keys and their ids"},
	"reservation_not_found": {text: "there is no file reservation with this id that you can see\n" +
		"  what to do: agentmail reservations lists them"},
	"recipient_not_found": {match: quoted, text: "no person or agent named %q\n" +
		"  what to do: check the spelling of the name"},
	"alias_not_found": {match: regexp.MustCompile(`alias "([^"]*)" for (\S+);`), text: "%[2]s has no conversation named %[1]q, so nothing was sent\n" +
		"  what to do: check the conversation's name after the last dot of the address; writing .new instead starts a new, empty conversation"},
	"storage_full": {match: regexp.MustCompile(`free space in (\S+)`), text: "the gateway's disk is full, so nothing was stored\n" +
		"  what to do: the gateway's operator frees space in %s; then try again"},
	"sign_in_throttled": {text: "too many failed sign-ins; signing in is locked for a while\n" +
		"  what to do: wait and try again; if you forgot the password, an admin can reset it"},
	"sign_in_busy": {text: "too many sign-ins at once; nothing is locked\n" +
		"  what to do: try again in a moment"},
	"route_not_found": {text: "the gateway does not know this request: it is probably an older version than this agentmail command\n" +
		"  what to do: update the gateway, or use the agentmail command of the gateway's version"},
}

// suggestAgentNotSetUp is the CLI's suggestion for an agent's address
// whose name is nobody yet (the gateway's suggestion names the Agent keys
// page then).
const suggestAgentNotSetUp = "  what to do: check the spelling. If it is an agent that is not set up yet: an admin registers its key " +
	"(web page: Admin → Agent keys), then its bridge connects (agentmail bridge --platform NAME on the agent's machine)"

// apiText answers a gateway error as the person reads it in l.
func apiText(l lang, api *client.APIError) string {
	w, ok := apiWords[api.Code()+"/"+api.Field()]
	if !ok {
		w, ok = apiWords[api.Code()]
	}
	if ok {
		var args []any
		if w.match != nil {
			m := w.match.FindStringSubmatch(api.Message())
			if m == nil {
				ok = false
			}
			for _, s := range m[min(1, len(m)):] {
				args = append(args, s)
			}
		}
		if ok {
			text := l.F(w.text, args...)
			if api.Code() == "recipient_not_found" && strings.Contains(api.Suggestion(), "Agent keys") {
				text = text[:strings.Index(text, "\n")+1] + l.S(suggestAgentNotSetUp)
			}
			return text + retryText(l, api)
		}
	}
	text := api.Message()
	if text == "" {
		text = l.F("the gateway answered %d", api.Status)
	}
	if s := api.Suggestion(); s != "" {
		text += "\n" + l.S("  what to do: ") + s
	}
	return text + retryText(l, api)
}

func retryText(l lang, api *client.APIError) string {
	if api.RetryAfter <= 0 {
		return ""
	}
	return "\n" + l.F("  try again in: %s", api.RetryAfter.String())
}
