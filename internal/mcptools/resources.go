package mcptools

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource addresses of the server (issue 19 item 4): read-only views of
// the agent's mail, rendered as read_inbox, read_mail and read_thread
// render them. Reading a resource never marks anything read.
const (
	ResourceInbox  = "agentmail://inbox"
	ResourceMail   = "agentmail://mail/{id}"
	ResourceThread = "agentmail://thread/{id}"
	// resourceInboxLimit is how many mails agentmail://inbox shows.
	resourceInboxLimit = 20
)

// registerResources declares the three resources; the server's
// capabilities then list "resources" (without subscribe or listChanged,
// which it does not offer).
func (s *Server) registerResources() {
	s.mcp.AddResource(&mcp.Resource{URI: ResourceInbox, Name: "inbox", Title: "AgentMail inbox", MIMEType: "text/plain",
		Description: "The 20 newest mails of your inbox, read and unread, newest first (as read_inbox with status=all); reading it marks nothing read."},
		s.readInboxResource)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ResourceMail, Name: "mail", Title: "One mail", MIMEType: "text/plain",
		Description: "One mail in full by its mail_id (as read_mail, but it is not marked read)."},
		s.readMailResource)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ResourceThread, Name: "thread", Title: "A thread", MIMEType: "text/plain",
		Description: "The whole thread of a mail, oldest first, by any of its mail_ids (as read_thread)."},
		s.readThreadResource)
}

func (s *Server) readInboxResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	mark := false
	l, err := s.gateway().Inbox(ctx, client.InboxQuery{Status: "all", Limit: resourceInboxLimit, MarkRead: &mark})
	if err != nil {
		return nil, resourceError(req.Params.URI, err)
	}
	return textResource(req.Params.URI, RenderInbox(l, "all", resourceInboxLimit)), nil
}

func (s *Server) readMailResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, ok := resourceID(req.Params.URI, "agentmail://mail/")
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	m, err := s.gateway().GetMail(ctx, id)
	if err != nil {
		return nil, resourceError(req.Params.URI, err)
	}
	return textResource(req.Params.URI, RenderMail(*m, 0)), nil
}

func (s *Server) readThreadResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, ok := resourceID(req.Params.URI, "agentmail://thread/")
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	l, err := s.gateway().Thread(ctx, id)
	if err != nil {
		return nil, resourceError(req.Params.URI, err)
	}
	return textResource(req.Params.URI, RenderThread(l)), nil
}

// resourceID answers the one path segment after prefix (unescaped).
func resourceID(uri, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, prefix)
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#") {
		return "", false
	}
	id, err := url.PathUnescape(rest)
	return id, err == nil && strings.TrimSpace(id) != ""
}

func textResource(uri, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}
}

// resourceError maps a gateway 404 (a mail that does not exist and one the
// agent may not see alike) to the protocol's "resource not found", and any
// other failure to an internal error carrying the rendered gateway error.
func resourceError(uri string, err error) error {
	if ae := client.AsAPIError(err); ae != nil && ae.Status == 404 {
		return mcp.ResourceNotFoundError(uri)
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: strings.TrimSpace(ErrorText("resources/read", err))}
}
