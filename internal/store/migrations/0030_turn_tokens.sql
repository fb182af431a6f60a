-- 0030: per-turn tokens (issue 12, point 9). The bridge asks for one per
-- turn with its agent key and hands only the token to the platform and its
-- tool server. A token acts as its agent within one session only, until it
-- expires or is revoked. Only the SHA-256 of the token is stored, as for keys.
CREATE TABLE turn_tokens (
    token_id    TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    agent_name  TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX turn_tokens_key ON turn_tokens (key_id);
