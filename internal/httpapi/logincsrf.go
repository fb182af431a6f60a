package httpapi

import (
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentmail/agentmail/internal/gateway"
)

// checkLoginRequest is the login CSRF rule (issue on the trust boundary,
// point 5): POST /auth/login reads only application/json, and a browser
// request from another site is refused, so a page elsewhere cannot sign the
// visitor's browser into someone else's account.
//
//   - Sec-Fetch-Site "cross-site" is a 403 cross_site_login (field Origin).
//   - Sec-Fetch-Site "same-origin" or "none" (typed into the address bar,
//     a bookmark) is the browser vouching for the request: accepted, also
//     behind a reverse proxy that rewrites Host.
//   - Otherwise an Origin header (browsers send it on every POST) must name
//     this gateway's own host (scheme-less comparison with the Host header);
//     "null" or another host is a 403 cross_site_login. A request without
//     Origin and without Sec-Fetch-Site is a non-browser client (the CLI,
//     curl, scripts) and is accepted.
//   - A Content-Type other than application/json (parameters such as
//     charset allowed), or none, is a 415 unsupported_media_type naming
//     Content-Type.
//
// Browsers cannot send application/json to another origin without a CORS
// preflight, which the gateway never grants; the Origin check is the
// second wall for browsers that do not send Sec-Fetch-Site.
func checkLoginRequest(r *http.Request) error {
	switch strings.ToLower(strings.TrimSpace(r.Header.Get("Sec-Fetch-Site"))) {
	case "cross-site":
		return crossSiteLogin("the browser marked this sign-in as coming from another site (Sec-Fetch-Site: cross-site)")
	case "same-origin", "none":
		return checkLoginContentType(r)
	}
	if origin := strings.TrimSpace(r.Header.Get("Origin")); origin != "" {
		u, err := url.Parse(origin)
		if origin == "null" || err != nil || u.Host == "" {
			return crossSiteLogin("the sign-in comes from a page without an origin of its own (Origin: " + origin + ")")
		}
		if !strings.EqualFold(u.Host, r.Host) {
			return crossSiteLogin("the sign-in comes from another site (Origin: " + origin + ", this gateway is " + r.Host + ")")
		}
	}
	return checkLoginContentType(r)
}

func checkLoginContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		shown := ct
		if shown == "" {
			shown = "none"
		}
		return gateway.UnsupportedMedia("unsupported_media_type",
			"sign-in reads only a JSON body; the request's Content-Type is "+shown,
			`send Content-Type: application/json with {"username": "...", "password": "..."}`)
	}
	return nil
}

func crossSiteLogin(why string) error {
	e := gateway.Forbidden("cross_site_login", "sign-in refused: "+why,
		"sign in on the gateway's own page, or from a client that is not a browser page of another site (agentmail login, curl)")
	e.Field = "Origin"
	return e
}
