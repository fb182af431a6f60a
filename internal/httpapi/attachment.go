package httpapi

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/blob"
	"github.com/agentmail/agentmail/internal/gateway"
)

// attachmentRoutes are upload and download of attachments (W-8; issue 3
// item 2), the same for agents and people; only the path and the key kind
// differ.
func attachmentRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "POST", Path: p + "/attachments", Auth: AuthAgent, Summary: "Upload an attachment (multipart field file)", Description: "Stores the file of the multipart field file; the answer's id goes into a mail's attachments. Unsent attachments are removed after a while. 400 no file field, 413 a file over the size limit.",
			Consumes: "multipart/form-data", Response: client.Attachment{}, Status: 201, Errors: []int{400, 401, 403, 413, 500}, Handler: (*Server).handleUploadAttachment},
		{Method: "GET", Path: p + "/attachments/{id}", Auth: AuthAgent, Summary: "Download an attachment (always octet-stream, as an attachment)", Description: "The content of an attachment of a mail the caller may see, always as application/octet-stream with Content-Disposition attachment. 404 an unknown attachment or one the caller may not see.",
			Status: 200, Errors: errsRead, Produces: "application/octet-stream", Handler: (*Server).handleDownloadAttachment},
		{Method: "POST", Path: p + "/me/attachments", Auth: AuthPerson, Summary: "Upload an attachment (multipart field file)", Description: "Stores the file of the multipart field file; the answer's id goes into a mail's attachments. Unsent attachments are removed after a while. 400 no file field, 413 a file over the size limit.",
			Consumes: "multipart/form-data", Response: client.Attachment{}, Status: 201, Errors: []int{400, 401, 403, 413, 500}, Handler: (*Server).handleUploadAttachment},
		{Method: "GET", Path: p + "/me/attachments/{id}", Auth: AuthPerson, Summary: "Download an attachment (always octet-stream, as an attachment)", Description: "The content of an attachment of a mail the caller may see, always as application/octet-stream with Content-Disposition attachment. 404 an unknown attachment or one the caller may not see.",
			Status: 200, Errors: errsRead, Produces: "application/octet-stream", Handler: (*Server).handleDownloadAttachment},
		{Method: "GET", Path: p + "/admin/attachments/{id}", Auth: AuthAdmin, Summary: "Download any attachment (an admin's export of everything)", Description: "The content of any attachment, as /me/attachments/{id} answers it, for agentmail export --all. 404 an unknown attachment.",
			Status: 200, Errors: errsRead, Produces: "application/octet-stream", Handler: (*Server).handleDownloadAttachment},
	}
}

// EnvMaxAttachmentBytes names the setting of Options.MaxAttachmentBytes
// in messages (read by `agentmail serve`).
const EnvMaxAttachmentBytes = "AGENTMAIL_MAX_ATTACHMENT_BYTES"

// multipartSlack is what a multipart body may carry beyond the file itself
// (boundaries, part headers, small extra fields).
const multipartSlack = 1 << 20

func attachmentsUnavailable() error {
	return &gateway.Error{Kind: gateway.KindUnavailable, Code: "attachments_unavailable",
		Message: "this gateway has no attachment store", Suggestion: "send the mail without attachments"}
}

func tooLarge(limit int64) error {
	return gateway.TooLarge("attachment_too_large", "the attachment is larger than the limit of "+gateway.SizeText(limit),
		"send a smaller file, split it, or ask the admin to raise "+EnvMaxAttachmentBytes)
}

// handleUploadAttachment streams the multipart part "file" into the blob
// store, measuring the size while it streams (never reading the whole file
// into memory): beyond the limit it answers 413 and keeps nothing. An
// uploader whose unsent uploads fill the quota (gateway
// Config.AttachmentQuotaBytes) gets 413 attachment_quota_exceeded before
// the body is read; one whose upload would pass it, after.
func (s *Server) handleUploadAttachment(w http.ResponseWriter, r *http.Request) error {
	if s.blobs == nil {
		return attachmentsUnavailable()
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return gateway.Invalid("file", "the body must be multipart/form-data with the file in the field \"file\"",
			"send a multipart upload, e.g. curl -F file=@path")
	}
	if r.ContentLength > s.opt.MaxAttachmentBytes+multipartSlack {
		return tooLarge(s.opt.MaxAttachmentBytes)
	}
	if err := s.svc.AttachmentQuotaFull(r.Context(), PrincipalOf(r)); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxAttachmentBytes+multipartSlack)
	mr, err := r.MultipartReader()
	if err != nil {
		return gateway.Invalid("file", "the multipart body cannot be read: "+err.Error(), "")
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return gateway.Invalid("file", "the multipart body has no field \"file\"", "put the file in the field named file")
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(s.opt.MaxAttachmentBytes)
		}
		if err != nil {
			return gateway.Invalid("file", "the multipart body cannot be read: "+err.Error(), "")
		}
		if part.FormName() != "file" {
			part.Close()
			continue
		}
		info, err := s.blobs.Put(part, s.opt.MaxAttachmentBytes)
		part.Close()
		var re *blob.ReadError
		switch {
		case errors.Is(err, blob.ErrTooLarge), errors.As(err, &mbe):
			return tooLarge(s.opt.MaxAttachmentBytes)
		case err != nil && r.Context().Err() != nil:
			return r.Context().Err()
		case errors.As(err, &re):
			// The request body broke off; the blob store kept nothing.
			return gateway.Invalid("file", "the upload was cut short: "+re.Err.Error(), "send the file again")
		case err != nil:
			return err
		}
		// One upload is one file: the rest of the body may carry other
		// fields but not a second "file" part. The content stored above is
		// referenced by nothing then, and the attachment sweep removes it.
		if err := noSecondFile(mr, s.opt.MaxAttachmentBytes); err != nil {
			return err
		}
		name := part.FileName()
		if name == "" {
			name = "attachment"
		}
		a, err := s.svc.CreateAttachment(r.Context(), PrincipalOf(r), gateway.NewAttachment{SHA256: info.SHA256, Size: info.Size,
			Filename: name, ContentType: part.Header.Get("Content-Type")})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, a)
		return nil
	}
}

// noSecondFile reads the parts after the file to the end of the body: a
// second part named "file" is a 400 (field file), a body beyond the limit a
// 413, an unreadable one a 400.
func noSecondFile(mr *multipart.Reader, limit int64) error {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(limit)
		}
		if err != nil {
			return gateway.Invalid("file", "the multipart body cannot be read: "+err.Error(), "")
		}
		second := part.FormName() == "file"
		part.Close()
		if second {
			return gateway.Invalid("file", "the multipart body has more than one field \"file\"; one upload carries one file",
				"upload each file on its own and send their attachment_ids together")
		}
	}
}

// handleDownloadAttachment answers the bytes, always as
// application/octet-stream with Content-Disposition: attachment and nosniff
// (W-8), to the uploader and the participants of a mail that carries it;
// anyone else gets 404.
func (s *Server) handleDownloadAttachment(w http.ResponseWriter, r *http.Request) error {
	if s.blobs == nil {
		return attachmentsUnavailable()
	}
	var a *client.Attachment
	var err error
	if strings.HasPrefix(r.URL.Path, Prefix+"/admin/") { // the route's Auth made the caller an admin
		a, err = s.svc.AdminAttachmentForDownload(r.Context(), chi.URLParam(r, "id"))
	} else {
		a, err = s.svc.AttachmentForDownload(r.Context(), PrincipalOf(r), chi.URLParam(r, "id"))
	}
	if err != nil {
		return err
	}
	f, err := s.blobs.Open(a.SHA256)
	if errors.Is(err, blob.ErrNotFound) {
		s.log.Error("attachment content missing", "attachment_id", a.AttachmentID, "sha256", a.SHA256)
		return gateway.NotFound("attachment_not_found", "the attachment's content is gone", "upload it again")
	}
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", ContentDisposition(a.Filename))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "private, no-store")
	h.Set("ETag", `"`+a.SHA256+`"`)
	http.ServeContent(w, r, "", time.Time{}, f)
	return nil
}

// ContentDisposition answers `attachment` with the filename, quoted, or
// RFC 2231-encoded (filename*=utf-8”...) when it is not plain ASCII. The
// name is made safe first (gateway.SafeFilename).
func ContentDisposition(filename string) string {
	v := mime.FormatMediaType("attachment", map[string]string{"filename": gateway.SafeFilename(filename)})
	if v == "" {
		return "attachment"
	}
	return v
}
