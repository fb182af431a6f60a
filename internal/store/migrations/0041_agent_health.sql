-- 0041: what an agent's bridge reports about its recent turns (issue 18
-- point 1). failing_cause is '' while the agent works, else one of
-- not_signed_in, no_cli, no_directory, no_model_allowed, busy, other;
-- failing_reason is the bridge's one-line English reason, failing_detail
-- the platform's own words. The Agents page shows such an agent as
-- "online, failing: <reason>".
ALTER TABLE agents ADD COLUMN failing_cause TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN failing_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN failing_detail TEXT NOT NULL DEFAULT '';
