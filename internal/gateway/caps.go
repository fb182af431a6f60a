package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmail/agentmail/internal/store"
)

// Caps of the free channels and of what one principal may hold (issue 12,
// "bounded free channels"; every cap is listed in docs/API.md "Limits").
// The relay rules are in relayrules.go, the schedule cap in schedule.go,
// the event-stream cap in the HTTP layer.
const (
	// DefaultMaxPendingPermissions is Config.MaxPendingPermissions when
	// it is not set: 10 undecided requests per session.
	DefaultMaxPendingPermissions = 10
	// DefaultAttachmentQuotaBytes is Config.AttachmentQuotaBytes when it
	// is not set: 1 GiB of unsent uploads per uploader.
	DefaultAttachmentQuotaBytes int64 = 1 << 30
	// pendingPermissionsRetry is the Retry-After of the pending cap: a
	// person's decision (or a request's timeout) frees a place, and
	// neither can be foreseen.
	pendingPermissionsRetry = 30 * time.Second
	// timedOutHoldsPlace is how long a permission request that nobody
	// decided before its expiry still counts under the pending cap,
	// from when it was asked.
	timedOutHoldsPlace = time.Hour
)

// checkPendingPermissions refuses a new permission request in a session
// that already has Config.MaxPendingPermissions undecided ones: 429
// too_many_pending_permissions. A request that timed out keeps its place
// for timedOutHoldsPlace after it was asked, so short expiries cannot
// flood the session's people. It runs inside the request's write
// transaction (an exclusive Write: on PostgreSQL it holds the replicas'
// write lock alone), so concurrent requests cannot pass the cap together.
func (s *Service) checkPendingPermissions(ctx context.Context, tx *Tx, sess store.SessionRow) error {
	n, err := tx.CountOpenPermissionsInSession(ctx, sess.SessionID, tx.Now.Add(-timedOutHoldsPlace))
	if err != nil {
		return err
	}
	limit := s.Config.MaxPendingPermissions
	if n < limit {
		return nil
	}
	return &Error{Kind: KindRateLimited, Code: "too_many_pending_permissions", RetryAfter: pendingPermissionsRetry,
		Message: fmt.Sprintf("session %q already has %d permission requests waiting for a decision or expired undecided within the last hour; the limit is %d per session",
			sess.Alias, n, limit),
		Suggestion: "do not run the action; wait until a person decides a waiting request (or it times out) and ask again, " +
			"or tell the person in your reply what you need; the admin can raise AGENTMAIL_MAX_PENDING_PERMISSIONS"}
}

// checkAttachmentQuota refuses an upload of size bytes that would take
// the uploader's attachments no mail carries yet beyond
// Config.AttachmentQuotaBytes: 413 attachment_quota_exceeded. Sending a
// mail with them (or their removal UnsentAttachmentTTL after upload) frees
// the quota. Size 0 asks whether the quota is already full (before an
// upload is read).
func (s *Service) checkAttachmentQuota(ctx context.Context, q *store.Q, uploader string, size int64) error {
	used, err := q.UnsentAttachmentBytes(ctx, uploader)
	if err != nil {
		return err
	}
	quota := s.Config.AttachmentQuotaBytes
	if (size == 0 && used < quota) || (size > 0 && used+size <= quota) {
		return nil
	}
	msg := fmt.Sprintf("this upload (%s) would take your unsent attachments to %s; the quota is %s of uploads no mail carries yet",
		SizeText(size), SizeText(used+size), SizeText(quota))
	if size == 0 {
		msg = fmt.Sprintf("your unsent attachments already take %s; the quota is %s of uploads no mail carries yet", SizeText(used), SizeText(quota))
	}
	return TooLarge("attachment_quota_exceeded", msg,
		fmt.Sprintf("send the attachments you uploaded in a mail first (unsent ones are removed %d hours after upload), "+
			"or ask the admin to raise AGENTMAIL_ATTACHMENT_QUOTA_BYTES", int(UnsentAttachmentTTL/time.Hour)))
}

// AttachmentQuotaFull answers the 413 attachment_quota_exceeded when the
// principal's unsent attachments already fill Config.AttachmentQuotaBytes,
// else nil; the HTTP layer asks before reading an upload, so it does not
// stream a body it would refuse. CreateAttachment checks the quota again
// with the real size.
func (s *Service) AttachmentQuotaFull(ctx context.Context, p *Principal) error {
	return s.checkAttachmentQuota(ctx, s.Read(), p.Name, 0)
}
