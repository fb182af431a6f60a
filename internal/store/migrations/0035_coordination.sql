-- 0035: coordination between agents (issue 21 items 1-3): importance,
-- acknowledgements and file reservations.
--
-- Importance is an integer rank (-1 low, 0 normal, 1 high, 2 urgent; see
-- store.Importance*), so that a row written without it is normal. It is stored on the mail and again on each of its
-- recipient rows: it never changes after sending, and the copy lets an
-- inbox be filtered and sorted by importance through an index.
ALTER TABLE mails ADD COLUMN importance INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mails ADD COLUMN ack_required BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE mails ADD COLUMN ack_due_at BIGINT;
ALTER TABLE mail_recipients ADD COLUMN importance INTEGER NOT NULL DEFAULT 0;
CREATE INDEX mail_recipients_importance ON mail_recipients (name, importance, mail_id);

-- One row per recipient of a mail sent with ack_required: acked_at is set
-- once, by that recipient's own acknowledgement (reading is not
-- acknowledging). sender is the mail's sender, copied for the sender's
-- "waiting for acknowledgement" view; due_at is when the acknowledgement
-- becomes overdue.
CREATE TABLE mail_acks (
    mail_id   TEXT NOT NULL REFERENCES mails(mail_id),
    name      TEXT NOT NULL,
    sender    TEXT NOT NULL,
    due_at    BIGINT NOT NULL,
    acked_at  BIGINT,
    PRIMARY KEY (mail_id, name)
);
CREATE INDEX mail_acks_recipient ON mail_acks (name, acked_at, due_at);
CREATE INDEX mail_acks_sender ON mail_acks (sender, acked_at, due_at);

-- Advisory leases on paths of a workspace (an absolute directory). pattern
-- is a path or glob relative to the workspace. An agent holds one row per
-- (workspace, pattern); asking again renews it. A row is deleted when the
-- reservation ends (release, expiry, its run stopped, its holder offline).
-- session_id is the session it was taken in ('' without one).
CREATE TABLE reservations (
    reservation_id  TEXT PRIMARY KEY,
    workspace       TEXT NOT NULL,
    pattern         TEXT NOT NULL,
    agent_name      TEXT NOT NULL,
    session_id      TEXT NOT NULL DEFAULT '',
    exclusive       BOOLEAN NOT NULL,
    reason          TEXT NOT NULL DEFAULT '',
    ttl_ms          BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    renewed_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX reservations_holder ON reservations (agent_name, workspace, pattern);
CREATE INDEX reservations_workspace ON reservations (workspace);
CREATE INDEX reservations_expiry ON reservations (expires_at);
