-- 0020: an always-allow grant belongs to the person who gave it (issue 12,
-- point 3). It is unique per agent + tool + scope + person, and its scope is
-- the agent's workspace in the session where it was given, as the gateway
-- knows it, not the scope the agent sent with its request. Existing grants
-- take that workspace; a grant whose session names no workspace for the
-- agent is dropped (it could never match a request's workspace again).
CREATE TABLE permission_grants_v2 (
    grant_id    TEXT PRIMARY KEY,
    agent_name  TEXT NOT NULL,
    tool        TEXT NOT NULL,
    scope       TEXT NOT NULL,
    session_id  TEXT NOT NULL DEFAULT '',
    granted_by  TEXT NOT NULL,
    mail_id     TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    UNIQUE (agent_name, tool, scope, granted_by)
);
INSERT INTO permission_grants_v2 (grant_id, agent_name, tool, scope, session_id, granted_by, mail_id, created_at)
SELECT g.grant_id, g.agent_name, g.tool, sp.workspace, g.session_id, g.granted_by, g.mail_id, g.created_at
FROM permission_grants g
JOIN session_participants sp ON sp.session_id = g.session_id AND sp.name = g.agent_name
WHERE sp.workspace <> ''
ON CONFLICT DO NOTHING;
DROP TABLE permission_grants;
ALTER TABLE permission_grants_v2 RENAME TO permission_grants;
CREATE INDEX permission_grants_agent ON permission_grants (agent_name, tool, scope);
