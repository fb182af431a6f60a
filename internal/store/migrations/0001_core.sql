-- 0001 core schema: names, people, agents, keys, cookie sessions, mail
-- sessions, mails, recipients, relays, events, runs, agent mirrors.
-- Times are BIGINT unix milliseconds UTC; booleans are BOOLEAN (0/1 in SQLite).

-- People and agents share one name space (seed 000 section 0): a name is
-- claimed here first, so a clash is a unique violation.
CREATE TABLE names (
    name        TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,              -- 'person' | 'agent'
    created_at  BIGINT NOT NULL
);

CREATE TABLE users (
    username       TEXT PRIMARY KEY REFERENCES names(name),
    password_hash  TEXT NOT NULL,            -- bcrypt
    role           TEXT NOT NULL,            -- 'admin' | 'user'
    disabled       BOOLEAN NOT NULL DEFAULT FALSE,
    created_at     BIGINT NOT NULL
);

-- An agent row exists from the moment a key names it; register fills in
-- the platform. default_rounds is the round budget new sessions get.
CREATE TABLE agents (
    name                TEXT PRIMARY KEY REFERENCES names(name),
    platform            TEXT NOT NULL DEFAULT '',
    workspaces          TEXT NOT NULL DEFAULT '[]',   -- JSON [{name,path}]
    default_rounds      INTEGER NOT NULL DEFAULT 20,
    registered_at       BIGINT,
    last_seen           BIGINT,
    sent_total          INTEGER NOT NULL DEFAULT 0,
    models_restricted   BOOLEAN NOT NULL DEFAULT FALSE, -- true: agent_allowed_models is the list (possibly empty)
    created_at          BIGINT NOT NULL
);

-- W-3 mirror of the platform's sessions, replaced as a whole by a heartbeat.
CREATE TABLE agent_platform_sessions (
    agent_name   TEXT NOT NULL,
    platform_id  TEXT NOT NULL,
    workspace    TEXT NOT NULL DEFAULT '',
    slug         TEXT NOT NULL DEFAULT '',
    title        TEXT NOT NULL DEFAULT '',
    mail_driven  BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at   BIGINT,
    position     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_name, platform_id)
);
CREATE INDEX agent_platform_sessions_slug ON agent_platform_sessions (slug);

-- W-3 model catalogue, replaced as a whole by a heartbeat.
CREATE TABLE agent_model_catalog (
    agent_name    TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    display_name  TEXT NOT NULL DEFAULT '',
    position      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_name, provider, model)
);

-- Allowed models in priority order; meaningful only when
-- agents.models_restricted is true. Filled by the admin model-scope endpoint.
CREATE TABLE agent_allowed_models (
    agent_name  TEXT NOT NULL,
    position    INTEGER NOT NULL,
    provider    TEXT NOT NULL,
    model       TEXT NOT NULL,
    PRIMARY KEY (agent_name, position)
);

-- Bearer keys, agent and user, stored as SHA-256 of the token.
CREATE TABLE api_keys (
    key_id        TEXT PRIMARY KEY,
    token_hash    TEXT NOT NULL UNIQUE,
    kind          TEXT NOT NULL,              -- 'agent' | 'user'
    owner         TEXT NOT NULL REFERENCES names(name),
    label         TEXT NOT NULL DEFAULT '',
    lifecycle     TEXT NOT NULL,              -- 'permanent' | 'one_time' | 'timed'
    prefix        TEXT NOT NULL,
    expires_at    BIGINT,
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT,
    used_at       BIGINT,                     -- first use of a one_time key
    revoked_at    BIGINT
);
CREATE INDEX api_keys_owner ON api_keys (kind, owner);

-- Cookie sessions of people, server-side. id_hash is SHA-256 of the cookie.
CREATE TABLE auth_sessions (
    id_hash       TEXT PRIMARY KEY,
    username      TEXT NOT NULL REFERENCES users(username),
    csrf_token    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    last_used_at  BIGINT NOT NULL
);
CREATE INDEX auth_sessions_user ON auth_sessions (username);

-- Mail sessions (conversations). The alias is globally unique.
-- agent_name/workspace describe the first addressee (informative).
CREATE TABLE mail_sessions (
    session_id           TEXT PRIMARY KEY,
    alias                TEXT NOT NULL UNIQUE,
    alias_source         TEXT NOT NULL,        -- 'auto' | 'platform' | 'manual'
    subject              TEXT NOT NULL DEFAULT '',
    agent_name           TEXT NOT NULL DEFAULT '',
    workspace            TEXT NOT NULL DEFAULT '',
    budget_max           INTEGER NOT NULL DEFAULT 0,  -- 0 = unlimited
    used_rounds          INTEGER NOT NULL DEFAULT 0,
    platform_session_id  TEXT NOT NULL DEFAULT '',
    created_by           TEXT NOT NULL,
    created_by_kind      TEXT NOT NULL,        -- 'person' | 'agent' | 'system'
    created_at           BIGINT NOT NULL,
    last_activity        BIGINT NOT NULL
);
-- New-session rate limit counts from here (holds across replicas).
CREATE INDEX mail_sessions_creator ON mail_sessions (created_by, created_at);

-- Who takes part in a session, and at which path (their own address's path).
CREATE TABLE session_participants (
    session_id     TEXT NOT NULL REFERENCES mail_sessions(session_id),
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL,              -- 'person' | 'agent'
    workspace      TEXT NOT NULL DEFAULT '',
    joined_at      BIGINT NOT NULL,
    last_activity  BIGINT NOT NULL,
    PRIMARY KEY (session_id, name)
);
-- Default-session lookup: recipient at a path, most recent first.
CREATE INDEX session_participants_lookup ON session_participants (name, workspace, last_activity);

CREATE TABLE mails (
    mail_id         TEXT PRIMARY KEY,          -- UUID v7: ordering by id is ordering by time
    session_id      TEXT NOT NULL REFERENCES mail_sessions(session_id),
    parent_mail_id  TEXT,                      -- reply: the mail answered; forward: the original
    from_name       TEXT NOT NULL,
    from_kind       TEXT NOT NULL,             -- 'person' | 'agent' | 'system'
    from_address    TEXT NOT NULL,
    subject         TEXT NOT NULL,
    body            TEXT NOT NULL,
    mail_type       TEXT NOT NULL,
    relay           TEXT NOT NULL DEFAULT '',
    relay_key       TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL
);
CREATE INDEX mails_session ON mails (session_id, mail_id);
CREATE INDEX mails_parent ON mails (parent_mail_id);
CREATE INDEX mails_from ON mails (from_name, mail_id);

CREATE TABLE mail_recipients (
    mail_id     TEXT NOT NULL REFERENCES mails(mail_id),
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL,                 -- 'person' | 'agent'
    role        TEXT NOT NULL,                 -- 'to' | 'cc'
    address     TEXT NOT NULL,
    workspace   TEXT NOT NULL DEFAULT '',
    is_read     BOOLEAN NOT NULL DEFAULT FALSE,
    read_at     BIGINT,
    position    INTEGER NOT NULL DEFAULT 0,   -- order of addressees
    PRIMARY KEY (mail_id, name)
);
CREATE INDEX mail_recipients_inbox ON mail_recipients (name, is_read, mail_id);
CREATE INDEX mail_recipients_all ON mail_recipients (name, mail_id);

-- Unread counters per mailbox, kept in the same transaction as the rows
-- they count (inbox answers must not count a million rows).
CREATE TABLE mailbox_counts (
    name    TEXT PRIMARY KEY,
    unread  INTEGER NOT NULL DEFAULT 0
);

-- Relay idempotency (W-5.2): one row per (agent, relay_key); a replay is a
-- unique violation, never a counter.
CREATE TABLE relayed_mails (
    agent_name  TEXT NOT NULL,
    relay_key   TEXT NOT NULL,
    relay_kind  TEXT NOT NULL,
    mail_id     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (agent_name, relay_key)
);

-- Attachment ids linked to a mail, in order. The attachments themselves are
-- described by the attachment domain's own table.
CREATE TABLE mail_attachments (
    mail_id        TEXT NOT NULL,
    attachment_id  TEXT NOT NULL,
    position       INTEGER NOT NULL,
    PRIMARY KEY (mail_id, attachment_id)
);
CREATE INDEX mail_attachments_attachment ON mail_attachments (attachment_id);

-- The event log: one row per recipient and event. The id is the SSE id.
CREATE TABLE events (
    event_id    {{AUTO_ID}},
    recipient   TEXT NOT NULL,
    type        TEXT NOT NULL,
    data        TEXT NOT NULL,                 -- JSON
    created_at  BIGINT NOT NULL
);
CREATE INDEX events_recipient ON events (recipient, event_id);

-- Runs reported by bridges (seed 004), an upsert by run_id.
CREATE TABLE runs (
    run_id          TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    mail_id         TEXT NOT NULL DEFAULT '',
    agent_name      TEXT NOT NULL,
    state           TEXT NOT NULL,
    model           TEXT NOT NULL DEFAULT '',
    attempt         INTEGER NOT NULL DEFAULT 0,
    pid             INTEGER NOT NULL DEFAULT 0,
    exit_code       INTEGER,
    started_at      BIGINT NOT NULL,
    ended_at        BIGINT,
    duration_ms     BIGINT NOT NULL DEFAULT 0,
    bytes_read      BIGINT NOT NULL DEFAULT 0,
    unparsed_lines  INTEGER NOT NULL DEFAULT 0,
    stop_reason     TEXT NOT NULL DEFAULT '',
    error           TEXT NOT NULL DEFAULT '',
    updated_at      BIGINT NOT NULL
);
CREATE INDEX runs_session ON runs (session_id, started_at);
