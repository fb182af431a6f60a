-- 0033: the email channel (issue 20). People give a mail address, get
-- notifications in their own mail client and answer by replying.

-- A person's address and preference. address is the verified address in
-- force ('' none); address_key its lower-cased form, unique across people
-- (NULL when there is none). pending_address waits for its code: the
-- 6-digit code and the link token are stored as SHA-256 only.
CREATE TABLE email_accounts (
    username         TEXT PRIMARY KEY,
    address          TEXT NOT NULL DEFAULT '',
    address_key      TEXT,
    verified_at      BIGINT,
    notify           TEXT NOT NULL DEFAULT 'permission',  -- 'all' | 'permission' | 'none'
    pending_address  TEXT NOT NULL DEFAULT '',
    code_hash        TEXT NOT NULL DEFAULT '',
    link_hash        TEXT NOT NULL DEFAULT '',
    code_expires_at  BIGINT,
    code_tries       INTEGER NOT NULL DEFAULT 0,
    code_sent_at     BIGINT,
    codes_sent       INTEGER NOT NULL DEFAULT 0,          -- codes sent since codes_window
    codes_window     BIGINT NOT NULL DEFAULT 0,
    updated_at       BIGINT NOT NULL
);
CREATE UNIQUE INDEX email_accounts_address ON email_accounts (address_key);

-- The durable outbox: one row per email to send. dedupe_key makes "once
-- per mail and address" a unique key ('mail:<mail_id>:<username>'), across
-- restarts and replicas. message is the whole RFC 5322 message, emptied
-- once it was delivered or given up (it holds the reply token in clear).
-- A sender claims a row by setting lease_until; a row whose lease ran out
-- (a sender that died) is claimed again.
CREATE TABLE email_outbox (
    outbox_id        TEXT PRIMARY KEY,
    dedupe_key       TEXT NOT NULL UNIQUE,
    kind             TEXT NOT NULL,                       -- 'mail' | 'verify' | 'notice'
    username         TEXT NOT NULL,
    mail_id          TEXT NOT NULL DEFAULT '',
    address          TEXT NOT NULL,
    message_id       TEXT NOT NULL,
    message          TEXT NOT NULL,
    state            TEXT NOT NULL,                       -- 'pending' | 'sent' | 'failed'
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    lease_until      BIGINT NOT NULL DEFAULT 0,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    sent_at          BIGINT,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX email_outbox_due ON email_outbox (state, next_attempt_at);
CREATE INDEX email_outbox_user ON email_outbox (username, updated_at);

-- Reply addresses r+<token>@MAIL_DOMAIN: only the SHA-256 of the token,
-- bound to one person and the one mail that person was notified of.
CREATE TABLE email_reply_tokens (
    token_hash  TEXT PRIMARY KEY,
    username    TEXT NOT NULL,
    mail_id     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- How far the outbox has followed the event log (one row, name 'outbox').
CREATE TABLE email_cursor (
    name           TEXT PRIMARY KEY,
    last_event_id  BIGINT NOT NULL
);

-- Replies taken in: the per-person rate and size limits count from here,
-- and the same message delivered twice (an MTA retrying) is stored once.
CREATE TABLE email_inbound (
    inbound_id   TEXT PRIMARY KEY,
    username     TEXT NOT NULL,
    message_id   TEXT,
    mail_id      TEXT NOT NULL DEFAULT '',
    size         BIGINT NOT NULL,
    received_at  BIGINT NOT NULL
);
CREATE INDEX email_inbound_user ON email_inbound (username, received_at);
CREATE UNIQUE INDEX email_inbound_message ON email_inbound (username, message_id);
