-- 0051: when a session last changed in a way an archive shows beyond its
-- new mail (issue 21 item 5): a rename (alias), a new subject (title), an
-- acknowledgement of one of its mails. agentmail export asks for the
-- sessions changed since its previous run (GET /api/v1/me/export/sessions)
-- and rewrites their files, so an incremental export follows renames.
-- Unix milliseconds UTC; 0 = not changed since it was created (or since
-- before this migration).
ALTER TABLE mail_sessions ADD COLUMN changed_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX mail_sessions_changed ON mail_sessions (changed_at, session_id);
