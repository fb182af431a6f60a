-- 0031: a session's former aliases (issue 14). A rename of any kind (the
-- D-5 ladder's one step, a person's rename, a collision suffix) keeps the
-- old alias here, so every alias a session has had keeps reaching it for
-- its participants. An alias is either current (mail_sessions.alias) or
-- former (here), never both and never of two sessions: the gateway checks
-- both tables before it gives an alias out (uniqueAlias), inside the write
-- transaction that stores it. alias_source gains the D-5 level of a
-- platform name: 'platform_slug', 'platform_title', 'subject' (see
-- store.AliasSource*); rows written before keep 'platform'.
CREATE TABLE session_former_aliases (
    alias        TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES mail_sessions(session_id),
    replaced_at  BIGINT NOT NULL
);
CREATE INDEX session_former_aliases_session ON session_former_aliases (session_id, replaced_at);
