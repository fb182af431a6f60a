-- 0038: a person's language (issue 18 point 2). Texts the gateway and the
-- bridges write for a person (failure reports, permission and decision
-- mails, reminders) follow it; the web page's language switch sets it.
-- 'en' (default) or 'zh'.
ALTER TABLE users ADD COLUMN language TEXT NOT NULL DEFAULT 'en';
