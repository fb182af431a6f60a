-- 0036: delegated sessions (issue 15). A session an agent opens from inside
-- another session's turn records that session as its origin; the gateway
-- derives it from the turn token, never from the request. '' is a session
-- opened outside any turn. The origin's people see the delegated session,
-- decide its permission requests, and receive the delegation relay of the
-- answer; a chain of origins is bounded by the gateway's delegation depth.
ALTER TABLE mail_sessions ADD COLUMN origin_session_id TEXT NOT NULL DEFAULT '';
CREATE INDEX mail_sessions_origin ON mail_sessions (origin_session_id);
