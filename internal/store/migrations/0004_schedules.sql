-- 0004 schedules (reminders, seed 001 change note). sent_at is claimed by a
-- conditional UPDATE ... WHERE sent_at IS NULL in the same transaction as
-- the reminder mail, so a reminder goes out once across restarts and
-- replicas.
CREATE TABLE schedules (
    schedule_id            TEXT PRIMARY KEY,
    owner                  TEXT NOT NULL,
    owner_kind             TEXT NOT NULL,     -- 'person' | 'agent'
    title                  TEXT NOT NULL,
    body                   TEXT NOT NULL DEFAULT '',
    event_time             BIGINT NOT NULL,
    remind_before_minutes  INTEGER NOT NULL DEFAULT 0,
    remind_at              BIGINT NOT NULL,
    recipients             TEXT NOT NULL DEFAULT '[]',  -- JSON array; empty = the owner
    sent_at                BIGINT,
    mail_id                TEXT NOT NULL DEFAULT '',
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL
);
CREATE INDEX schedules_owner ON schedules (owner, event_time);
CREATE INDEX schedules_due ON schedules (remind_at);
