-- 0002 permission requests, decisions and grants (W-6, B-8, seed 003).
-- Times are BIGINT unix milliseconds UTC; booleans are BOOLEAN.

-- One row per permission request; the request itself is the
-- mail_type=permission_request mail with the same id. A replay of the same
-- (agent, relay_key) is a unique violation, so one request makes one mail.
CREATE TABLE permission_requests (
    mail_id     TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL,
    agent_name  TEXT NOT NULL,
    question    TEXT NOT NULL,
    options     TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    context     TEXT NOT NULL DEFAULT '',
    tool        TEXT NOT NULL DEFAULT '',
    args_hash   TEXT NOT NULL DEFAULT '',      -- SHA-256 of the canonical tool_input
    scope       TEXT NOT NULL DEFAULT '',      -- grant scope ("always" stores agent + tool + scope)
    relay_key   TEXT NOT NULL,
    expires_at  BIGINT,                        -- NULL: never decided by the clock
    created_at  BIGINT NOT NULL,
    UNIQUE (agent_name, relay_key)
);
CREATE INDEX permission_requests_session ON permission_requests (session_id, mail_id);
CREATE INDEX permission_requests_expiry ON permission_requests (expires_at);

-- The decision of a request. The primary key makes the first decision win:
-- a second one cannot be inserted (issue 3: "first decision wins").
CREATE TABLE permission_decisions (
    mail_id           TEXT PRIMARY KEY REFERENCES permission_requests(mail_id),
    decision          TEXT NOT NULL,           -- the decider's word as written
    approved          BOOLEAN NOT NULL,
    always_allow      BOOLEAN NOT NULL,
    note              TEXT NOT NULL DEFAULT '',
    decided_by        TEXT NOT NULL,           -- username, or 'timeout'
    decided_via       TEXT NOT NULL,           -- 'api' | 'reply' | 'timeout'
    decision_mail_id  TEXT NOT NULL,
    decided_at        BIGINT NOT NULL
);

-- "Always allow" grants: one per agent + tool + scope.
CREATE TABLE permission_grants (
    grant_id    TEXT PRIMARY KEY,
    agent_name  TEXT NOT NULL,
    tool        TEXT NOT NULL,
    scope       TEXT NOT NULL,
    session_id  TEXT NOT NULL DEFAULT '',      -- session of the request that made it
    granted_by  TEXT NOT NULL,
    mail_id     TEXT NOT NULL DEFAULT '',      -- the request it came from
    created_at  BIGINT NOT NULL,
    UNIQUE (agent_name, tool, scope)
);
