package httpapi

import (
	"net/http"
	"sync"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/httpbody"
)

// OpenAPIRoutes converts the route table for the generator.
func OpenAPIRoutes() []OpenAPIRoute {
	table := RouteTable()
	out := make([]OpenAPIRoute, 0, len(table))
	for _, rt := range table {
		or := OpenAPIRoute{
			Method: rt.Method, Path: rt.Path, Auth: rt.Auth, Summary: rt.Summary, Description: rt.Description, Tag: rt.Tag,
			Request: rt.Request, Response: rt.Response, Status: rt.Status, Errors: rt.Errors,
			Query: rt.Query, RequestContentType: rt.Consumes, ResponseContentType: rt.Produces, PlainErrors: rt.PlainErrors,
		}
		out = append(out, or)
	}
	return out
}

var (
	openAPIOnce sync.Once
	openAPIDocB []byte
	openAPIBody *httpbody.Fixed // openAPIDocB with its ETag and gzip form
	openAPIErr  error
)

// OpenAPIDocument returns the OpenAPI 3.1 document of the route table (built
// once per process): the bytes GET /api/v1/openapi.json serves and
// api/openapi.json holds.
func OpenAPIDocument() ([]byte, error) {
	openAPIOnce.Do(func() {
		openAPIDocB, openAPIErr = BuildOpenAPI(OpenAPIRoutes(), RouteTags, client.ErrorBody{}, streamEvents()...)
		if openAPIErr == nil {
			openAPIBody = httpbody.New("openapi.json", openAPIDocB)
		}
	})
	return openAPIDocB, openAPIErr
}

// handleOpenAPI serves GET /api/v1/openapi.json: revalidated on every use
// (ETag, 304), gzip-compressed for clients that accept it.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	if _, err := OpenAPIDocument(); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-cache")
	openAPIBody.Serve(w, r)
	return nil
}
