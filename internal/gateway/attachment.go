package gateway

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// Attachment limits and sweep rules (W-8, seed 001 "attachments").
const (
	// DefaultMaxAttachmentBytes is the size limit of one attachment when
	// AGENTMAIL_MAX_ATTACHMENT_BYTES is not set: 25 MB.
	DefaultMaxAttachmentBytes int64 = 25 << 20
	// UnsentAttachmentTTL: an attachment no mail carries is removed this
	// long after its upload.
	UnsentAttachmentTTL = 24 * time.Hour
	// MaxFilenameBytes bounds a stored attachment filename.
	MaxFilenameBytes = 255
	// MaxAttachmentsPerMail bounds attachment_ids of one mail.
	MaxAttachmentsPerMail = 20
)

func attachmentView(a store.AttachmentRow) client.Attachment {
	return client.Attachment{AttachmentID: a.AttachmentID, Filename: a.Filename, Size: a.Size, SHA256: a.SHA256,
		ContentType: a.ContentType, CreatedAt: a.CreatedAt}
}

// checkAttachments is the send path's attachment check, called by
// CreateMailTx inside the sending transaction: every id must name an attachment
// the sender uploaded (issue 3: "attachment_ids on send must belong to the
// sender"), at most MaxAttachmentsPerMail, none twice. Else a 400 naming
// attachment_ids.
func checkAttachments(ctx context.Context, q *store.Q, owner string, ids []string) error {
	if len(ids) > MaxAttachmentsPerMail {
		return Invalid("attachment_ids", fmt.Sprintf("at most %d attachments per mail", MaxAttachmentsPerMail), "send the rest in another mail")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return Invalid("attachment_ids", fmt.Sprintf("attachment %q is listed twice", id), "list each attachment once")
		}
		seen[id] = true
	}
	rows, err := q.AttachmentsByID(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		a, ok := rows[id]
		if !ok || a.Uploader != owner {
			return Invalid("attachment_ids", fmt.Sprintf("attachment %q does not exist or was not uploaded by you", id),
				"upload the file first (POST /api/v1/attachments or /api/v1/me/attachments) and use the attachment_id it answers")
		}
	}
	return nil
}

// attachmentsOfMails answers, for the mail view (mailViews), the
// attachments of each mail, in the order they were attached.
func attachmentsOfMails(ctx context.Context, q *store.Q, mailIDs []string) (map[string][]client.Attachment, error) {
	links, err := q.AttachmentIDs(ctx, mailIDs)
	if err != nil {
		return nil, err
	}
	var all []string
	for _, ids := range links {
		all = append(all, ids...)
	}
	rows, err := q.AttachmentsByID(ctx, all)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]client.Attachment, len(links))
	for m, ids := range links {
		for _, id := range ids {
			if a, ok := rows[id]; ok {
				out[m] = append(out[m], attachmentView(a))
			}
		}
	}
	return out, nil
}

// SafeFilename reduces an uploaded file name to something safe to store and
// to send back in Content-Disposition: the last path element (either slash),
// without control characters, quotes, backslashes or leading dots, at most
// MaxFilenameBytes bytes of valid UTF-8. An empty result is "attachment".
func SafeFilename(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(strings.TrimSpace(name))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == utf8.RuneError, unicode.IsControl(r), r == '"', r == '/', r == '\\',
			unicode.Is(unicode.Bidi_Control, r):
			continue
		}
		if b.Len()+utf8.RuneLen(r) > MaxFilenameBytes {
			break
		}
		b.WriteRune(r)
	}
	out := strings.TrimLeft(strings.TrimSpace(b.String()), ".")
	if out == "" {
		return "attachment"
	}
	return out
}

// CleanContentType keeps a declared content type only when it parses as a
// media type (with its parameters re-encoded), else answers
// "application/octet-stream". Downloads never use it (W-8).
func CleanContentType(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || len(ct) > 255 {
		return "application/octet-stream"
	}
	return mime.FormatMediaType(mt, params)
}

// NewAttachment describes content already stored in the blob store.
type NewAttachment struct {
	SHA256      string
	Size        int64
	Filename    string
	ContentType string
}

// CreateAttachment records an upload of the principal (W-8). The bytes are
// already in the blob store under a.SHA256; the filename is made safe and
// the content type cleaned. The attachment is removed after
// UnsentAttachmentTTL unless a mail carries it by then. An upload that
// would take the uploader's unsent uploads beyond
// Config.AttachmentQuotaBytes is a 413 attachment_quota_exceeded and
// records nothing.
func (s *Service) CreateAttachment(ctx context.Context, p *Principal, a NewAttachment) (*client.Attachment, error) {
	kind := store.KindPerson
	if p.IsAgent() {
		kind = store.KindAgent
	}
	row := store.AttachmentRow{AttachmentID: store.NewID(), SHA256: a.SHA256, Size: a.Size,
		Filename: SafeFilename(a.Filename), ContentType: CleanContentType(a.ContentType),
		Uploader: p.Name, UploaderKind: kind}
	err := s.Write(ctx, func(tx *Tx) error {
		row.CreatedAt = tx.Now
		if err := s.checkAttachmentQuota(ctx, tx.Q, p.Name, a.Size); err != nil { // caps.go
			return err
		}
		return tx.InsertAttachment(ctx, row)
	})
	if err != nil {
		return nil, err
	}
	s.Log.Info("attachment stored", "attachment_id", row.AttachmentID, "sha256", row.SHA256, "size", row.Size, "by", p.Name)
	v := attachmentView(row)
	return &v, nil
}

// AttachmentForDownload answers the attachment if the principal uploaded it
// or sent or received a mail that carries it (W-8); any other id is a 404.
func (s *Service) AttachmentForDownload(ctx context.Context, p *Principal, id string) (*client.Attachment, error) {
	q := s.Read()
	ok, err := q.CanFetchAttachment(ctx, id, p.Name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, attachmentNotFound()
	}
	a, err := q.GetAttachment(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, attachmentNotFound()
	}
	if err != nil {
		return nil, err
	}
	v := attachmentView(a)
	return &v, nil
}

func attachmentNotFound() error {
	return NotFound("attachment_not_found", "no such attachment",
		"check the attachment_id; only the uploader and the people and agents of a mail that carries it can fetch it")
}

// BlobRemover is the part of the blob store the attachment sweep needs
// (implemented by *blob.Store).
type BlobRemover interface {
	// RemoveIfIdle removes the content with that digest unless it was
	// written after idleSince.
	RemoveIfIdle(sum string, idleSince time.Time) (bool, error)
	// Sums lists the digests of every stored content.
	Sums() ([]string, error)
}

// blobIdleGrace is how long a blob without metadata is kept: an upload
// writes the blob before its metadata row.
const blobIdleGrace = time.Hour

// SweepAttachments removes attachments that no mail carries UnsentAttachmentTTL
// after their upload (seed 001), and then every blob no attachment refers
// to any more (also blobs left by an upload whose metadata never got
// written). A blob written within blobIdleGrace stays, so an upload of the
// same content racing with the sweep keeps its bytes. It answers how many
// attachments it removed.
func (s *Service) SweepAttachments(ctx context.Context, blobs BlobRemover) (int, error) {
	now := s.Now()
	rows, err := s.Read().UnsentAttachmentsBefore(ctx, now.Add(-UnsentAttachmentTTL), 500)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, a := range rows {
		var ok bool
		err := s.Write(ctx, func(tx *Tx) error {
			var err error
			ok, err = tx.DeleteUnsentAttachment(ctx, a.AttachmentID)
			return err
		})
		if err != nil {
			return removed, err
		}
		if ok {
			removed++
			s.Log.Info("unsent attachment removed", "attachment_id", a.AttachmentID, "sha256", a.SHA256)
		}
	}
	if blobs == nil {
		return removed, nil
	}
	all, err := blobs.Sums()
	if err != nil {
		return removed, err
	}
	for _, sum := range all {
		used, err := s.Read().SHA256Referenced(ctx, sum)
		if err != nil {
			return removed, err
		}
		if used {
			continue
		}
		if ok, err := blobs.RemoveIfIdle(sum, time.Now().Add(-blobIdleGrace)); err != nil {
			return removed, err
		} else if ok {
			s.Log.Info("unreferenced attachment content removed", "sha256", sum)
		}
	}
	return removed, nil
}
