package httpapi

import (
	"regexp"
	"strings"

	"github.com/agentmail/agentmail/internal/gateway"
)

// Errors a person reads (the web page, the CLI) carry no rule numbers,
// endpoints or API hints (issue 18 point 5): those stay in the answers to
// agents, in the logs and in docs/API.md. personErrorText rewrites one
// error's message and suggestion for a person.

// personSuggestions are the person's words for suggestions that point to
// an endpoint, by the suggestion agents get.
var personSuggestions = map[string]string{
	gateway.SuggestAgentNotSetUp: "check the spelling of the name. If it is an agent that is not set up yet: an admin registers its key " +
		"(web page: Admin → Agent keys), then its bridge connects (agentmail bridge --platform NAME on the agent's machine); " +
		"the first start of the bridge prints the key and the command to register it",
	"check the name; GET /api/v1/contacts lists people and agents":                                                    "check the spelling of the name; the web page suggests people and agents as you type an address",
	"check the alias (GET /api/v1/address/suggest); do not retry with .new, which would open an empty session (N-8)":  "check the session's name after the last dot of the address; writing .new instead would start a new, empty conversation",
	"change an existing session's budget with PATCH /api/v1/me/sessions/{id}, or drop round_budget":                   "change the budget of the existing conversation on its page instead, or leave the budget out",
	"list agents with GET /api/v1/agents":                                                                             "the Agents page of the web page lists them",
	"people list their grants with GET /api/v1/me/grants":                                                             "your grants are on the Account page of the web page",
	"list grants with GET /api/v1/me/grants":                                                                          "your grants are on the Account page of the web page",
	"list your schedules (GET /api/v1/schedules) for their ids":                                                       "check the schedule's id",
	"delete schedules that were sent or are no longer needed (DELETE /api/v1/schedules/{id}), then create this one":   "delete schedules that were sent or are no longer needed, then create this one",
	"list users with GET /api/v1/admin/users":                                                                         "the Admin page of the web page lists people",
	"send X-CSRF-Token: <csrf_token> (GET /api/v1/me answers it again)":                                               "reload the page and try again",
	"sign in (POST /api/v1/auth/login) or send Authorization: Bearer <key>":                                           "sign in on the web page, or run agentmail login",
	"ask an admin to register an agent key (POST /api/v1/admin/agent-keys)":                                           "ask an admin to register an agent key",
	"upload the file first (POST /api/v1/attachments or /api/v1/me/attachments) and use the attachment_id it answers": "attach the file again",
	`set one with PATCH /api/v1/me {"email": "..."}`:                                                                  "enter your address on the Account page first",
	gateway.SuggestRevokeKeys: "revoke keys you no longer use on the Account page (or with agentmail keys revoke), then create the new one",
	suggestMarkWithPost:       "open the mails to mark them read, or mark them read from the inbox",
}

var (
	// A rule reference: one capital letter, a dash, a dotted number ("W-5.1").
	ruleRef      = `[A-Z]-\d+(?:\.\d+)*`
	ruleInParens = regexp.MustCompile(`\s*\(\s*` + ruleRef + `(?:\s*[,;/]\s*` + ruleRef + `)*\s*\)`)
	ruleBare     = regexp.MustCompile(`\b` + ruleRef + `\b:?`)
	// An endpoint: an HTTP method and a path; in parentheses.
	endpoint = regexp.MustCompile(`\b(?:GET|POST|PUT|PATCH|DELETE) /[^\s),;]*`)
	// Only before punctuation that ends a clause: " .new" stays.
	spaceBeforePunct = regexp.MustCompile(` ([,.;:)])(\s|$)`)
	endpointInParens = regexp.MustCompile(`\s*\([^()]*\b(?:GET|POST|PUT|PATCH|DELETE) /[^()]*\)`)
)

// personErrorText answers message and suggestion as a person reads them:
// rule references dropped; a suggestion that names an endpoint replaced by
// its person's words, or dropped when there are none (the message's
// endpoint parenthesis too).
func personErrorText(message, suggestion string) (string, string) {
	if p, ok := personSuggestions[suggestion]; ok {
		suggestion = p
	}
	message, suggestion = withoutRules(message), withoutRules(suggestion)
	if endpoint.MatchString(suggestion) {
		suggestion = ""
	}
	if endpoint.MatchString(message) {
		message = strings.TrimSpace(endpointInParens.ReplaceAllString(message, ""))
	}
	return message, suggestion
}

func withoutRules(s string) string {
	s = ruleInParens.ReplaceAllString(s, "")
	s = ruleBare.ReplaceAllString(s, "")
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimSpace(spaceBeforePunct.ReplaceAllString(s, "$1$2"))
}
