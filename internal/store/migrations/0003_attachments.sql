-- 0003 attachment metadata (W-8). The bytes live in the blob store under
-- their sha256; several rows may share one blob. An attachment is "sent"
-- once mail_attachments (0001) links it to a mail.
CREATE TABLE attachments (
    attachment_id  TEXT PRIMARY KEY,
    sha256         TEXT NOT NULL,
    size           BIGINT NOT NULL,
    filename       TEXT NOT NULL,
    content_type   TEXT NOT NULL DEFAULT '',
    uploader       TEXT NOT NULL,
    uploader_kind  TEXT NOT NULL,             -- 'person' | 'agent'
    created_at     BIGINT NOT NULL
);
CREATE INDEX attachments_sha256 ON attachments (sha256);
CREATE INDEX attachments_created ON attachments (created_at);
