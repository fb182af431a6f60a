-- 0017: mail sessions bound to a platform session (platform_session_id) are
-- looked up by it, to decide who may see and address a mirrored platform
-- session (only the bound mail session's participants).
CREATE INDEX mail_sessions_platform ON mail_sessions (platform_session_id) WHERE platform_session_id <> '';
