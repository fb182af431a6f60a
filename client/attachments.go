package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"strings"
)

// UploadAttachment stores a file for a later SendMail
// (POST /api/v1/attachments, multipart field "file", 201, W-8). The content
// of r is streamed through the request as it is read, never held in memory
// whole; r is read to its end or until the gateway stops reading. The part's
// content type is guessed from the filename's extension
// (application/octet-stream when unknown). Errors: 413 when the file is over
// the gateway's limit, 400 field "file".
func (c *Client) UploadAttachment(ctx context.Context, filename string, r io.Reader) (*Attachment, error) {
	return c.upload(ctx, apiPath("/attachments"), filename, r)
}

// MeUploadAttachment is UploadAttachment for people
// (POST /api/v1/me/attachments).
func (c *Client) MeUploadAttachment(ctx context.Context, filename string, r io.Reader) (*Attachment, error) {
	return c.upload(ctx, apiPath("/me/attachments"), filename, r)
}

// DownloadAttachment opens an attachment of a mail the agent can see
// (GET /api/v1/attachments/{id}). The caller reads and must close the
// returned stream; nothing is buffered. Errors: 404 for an unknown or
// unseen attachment.
func (c *Client) DownloadAttachment(ctx context.Context, id string) (io.ReadCloser, *AttachmentMeta, error) {
	return c.download(ctx, apiPath("/attachments/%s", id))
}

// MeDownloadAttachment is DownloadAttachment for people
// (GET /api/v1/me/attachments/{id}).
func (c *Client) MeDownloadAttachment(ctx context.Context, id string) (io.ReadCloser, *AttachmentMeta, error) {
	return c.download(ctx, apiPath("/me/attachments/%s", id))
}

// quoteEscaper escapes a filename for a Content-Disposition parameter.
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", "")

// upload streams one multipart/form-data request with the single field
// "file": a goroutine writes the multipart framing and copies r into a pipe
// the transport reads from, so memory use is independent of the file size.
func (c *Client) upload(ctx context.Context, path, filename string, r io.Reader) (*Attachment, error) {
	if strings.TrimSpace(filename) == "" {
		return nil, fmt.Errorf("agentmail client: upload to %s: filename is empty; give the name the recipients should see", path)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	ctype := mime.TypeByExtension(strings.ToLower(filepath.Ext(filename)))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	go func() {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, quoteEscaper.Replace(filename)))
		h.Set("Content-Type", ctype)
		part, err := mw.CreatePart(h)
		if err == nil {
			_, err = io.Copy(part, r)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err) // nil closes normally
	}()

	req, err := c.newRequest(ctx, http.MethodPost, path, nil, pr)
	if err != nil {
		pr.CloseWithError(err)
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	resp, err := c.send(req)
	// Whatever happened, stop the writer goroutine if the transport did not
	// read the pipe to its end (an early error answer, a cancelled context).
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out Attachment
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("agentmail client: decode POST %s answer: %w", path, err)
	}
	return &out, nil
}

// download opens a GET of raw bytes and reads the metadata headers.
func (c *Client) download(ctx context.Context, path string) (io.ReadCloser, *AttachmentMeta, error) {
	req, err := c.newRequest(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/octet-stream")
	resp, err := c.send(req)
	if err != nil {
		return nil, nil, err
	}
	meta := &AttachmentMeta{Size: resp.ContentLength, ContentType: resp.Header.Get("Content-Type")}
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		if _, params, err := mime.ParseMediaType(cd); err == nil {
			meta.Filename = params["filename"]
		}
	}
	return resp.Body, meta, nil
}
