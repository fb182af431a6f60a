package httpapi

import (
	"net/http"
	"sync"

	"github.com/agentmail/agentmail/client"
)

// openAPIExtra adds to a route what the route table does not carry: query
// parameters and a non-JSON request body. Keys are "METHOD pattern";
// TestOpenAPIExtrasNameRoutes fails for a key that names no route.
type openAPIExtra struct {
	Query              []OpenAPIParam
	RequestContentType string
}

var (
	oaLimit = func(def int) OpenAPIParam {
		return OpenAPIParam{Name: "limit", Type: "integer", Default: def, Description: "at most this many items"}
	}
	oaCursor = OpenAPIParam{Name: "cursor", Type: "string", Description: "next_cursor of the previous page"}
	oaUpload = openAPIExtra{RequestContentType: "multipart/form-data"}
)

// openAPIExtras holds the query parameters of docs/API.md.
var openAPIExtras = map[string]openAPIExtra{
	"GET " + Prefix + "/me/mail/inbox": {Query: []OpenAPIParam{
		{Name: "status", Enum: []string{"all", "unread", "read"}, Default: "all"}, oaLimit(50), oaCursor,
		{Name: "mark_read", Type: "boolean", Default: false, Description: "mark exactly the listed mails read"},
	}},
	"GET " + Prefix + "/me/mail/sent": {Query: []OpenAPIParam{oaLimit(50), oaCursor}},
	"GET " + Prefix + "/me/mail/{id}/tree": {Query: []OpenAPIParam{
		{Name: "before", Type: "integer", Default: 20, Description: "nodes before the mail"},
		{Name: "after", Type: "integer", Default: 20, Description: "nodes after the mail"}, oaCursor,
	}},
	"GET " + Prefix + "/me/sessions":            {Query: []OpenAPIParam{oaLimit(50), oaCursor}},
	"GET " + Prefix + "/me/sessions/{id}/mails": {Query: []OpenAPIParam{oaLimit(50), oaCursor}},
	"GET " + Prefix + "/me/permissions":         {Query: []OpenAPIParam{{Name: "status", Enum: []string{"pending", "decided", "all"}, Default: "pending"}}},
	"GET " + Prefix + "/address/suggest":        {Query: []OpenAPIParam{{Name: "q", Description: "what was typed so far"}, oaLimit(10)}},
	"GET " + Prefix + "/address/resolve":        {Query: []OpenAPIParam{{Name: "address", Required: true, Description: "name@path.session"}}},
	"GET " + Prefix + "/grants":                 {Query: []OpenAPIParam{{Name: "session_id"}, {Name: "tool"}}},
	"POST " + Prefix + "/attachments":           oaUpload,
	"POST " + Prefix + "/me/attachments":        oaUpload,
	"GET " + Prefix + "/mail/inbox": {Query: []OpenAPIParam{
		{Name: "status", Enum: []string{"unread", "read", "all"}, Default: "unread"}, oaLimit(5), oaCursor,
		{Name: "mark_read", Type: "boolean", Default: true, Description: "T-1: marks exactly the listed mails read; never with status=all"},
	}},
}

// OpenAPIRoutes converts the route table for the generator, adding the
// query parameters and upload bodies of openAPIExtras.
func OpenAPIRoutes() []OpenAPIRoute {
	table := RouteTable()
	out := make([]OpenAPIRoute, 0, len(table))
	for _, rt := range table {
		or := OpenAPIRoute{
			Method: rt.Method, Path: rt.Path, Auth: rt.Auth, Summary: rt.Summary,
			Request: rt.Request, Response: rt.Response, Status: rt.Status, Errors: rt.Errors,
			ResponseContentType: rt.Produces,
		}
		if x, ok := openAPIExtras[rt.Method+" "+rt.Path]; ok {
			or.Query = x.Query
			or.RequestContentType = x.RequestContentType
		}
		out = append(out, or)
	}
	return out
}

var (
	openAPIOnce sync.Once
	openAPIDocB []byte
	openAPIErr  error
)

// OpenAPIDocument returns the OpenAPI 3.1 document of the route table (built
// once per process): the bytes GET /api/v1/openapi.json serves and
// api/openapi.json holds.
func OpenAPIDocument() ([]byte, error) {
	openAPIOnce.Do(func() {
		openAPIDocB, openAPIErr = BuildOpenAPI(OpenAPIRoutes(), client.ErrorBody{}, streamEvents()...)
	})
	return openAPIDocB, openAPIErr
}

// NewDocumentValidator returns a ResponseValidator for the document of the
// route table, for tests that check recorded answers.
func NewDocumentValidator() (*ResponseValidator, error) {
	doc, err := OpenAPIDocument()
	if err != nil {
		return nil, err
	}
	return NewResponseValidator(doc)
}

// handleOpenAPI serves GET /api/v1/openapi.json.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	doc, err := OpenAPIDocument()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
	return nil
}
