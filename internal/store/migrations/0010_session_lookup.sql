-- 0010: default-session lookups walk an agent's sessions newest first and
-- stop at the first one the sender takes part in, instead of scanning every
-- session the sender ever joined.
CREATE INDEX mail_sessions_agent_path ON mail_sessions (agent_name, workspace, last_activity);
CREATE INDEX mail_sessions_agent_recent ON mail_sessions (agent_name, last_activity);
