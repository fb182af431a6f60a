-- 0023: bounded free channels (issue 12).
--
-- A relay mail answers one received mail, and each kind of answer has one
-- slot per receiving agent and received mail: 'answer' (the turn's
-- summary) and 'failure' (the failure report). The primary key makes a
-- second distinct relay of the same kind a unique violation, never a
-- count; the rules that choose the slot are gateway/relayrules.go.
CREATE TABLE relay_answers (
    agent_name    TEXT NOT NULL,
    answers_mail  TEXT NOT NULL,   -- the received mail the relay answers
    slot          TEXT NOT NULL,   -- 'answer' | 'failure'
    relay_key     TEXT NOT NULL,
    mail_id       TEXT NOT NULL,   -- the relay mail
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (agent_name, answers_mail, slot)
);

-- Relays stored before keep their first answer of each kind per received
-- mail; later ones of the same kind are left unclaimed.
INSERT INTO relay_answers (agent_name, answers_mail, slot, relay_key, mail_id, created_at)
SELECT r.agent_name, m.parent_mail_id,
       CASE WHEN m.mail_type = 'failure_report' THEN 'failure' ELSE 'answer' END,
       r.relay_key, r.mail_id, r.created_at
FROM relayed_mails r JOIN mails m ON m.mail_id = r.mail_id
WHERE r.relay_kind = 'summary' AND m.parent_mail_id IS NOT NULL AND m.parent_mail_id <> ''
ORDER BY r.created_at, r.mail_id
ON CONFLICT DO NOTHING;

-- The per-uploader quota of unsent attachments sums one uploader's rows.
CREATE INDEX attachments_uploader ON attachments (uploader, created_at);
