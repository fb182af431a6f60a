-- 0039: run control (issue 16, seed 004). A run can be queued (waiting for
-- a turn slot: queue_position turns ahead, max_turns the bridge's cap),
-- shows live progress while it runs (tool_calls, last_tool and a one-line
-- last_tool_input, last_activity_at), can be stopped by a person
-- (stop_requested_at, stopped_by; quiescence 'proven' | 'unproven' once the
-- bridge checked the turn's processes by pid) and links its transcript
-- (transcript_attachment_id, an attachment the agent uploaded). An agent's
-- heartbeat tells the bridge's and the platform's versions (the build
-- fingerprint of seed 004 section 3).
ALTER TABLE runs ADD COLUMN queue_position INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN max_turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN tool_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN last_tool TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN last_tool_input TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN last_activity_at BIGINT;
ALTER TABLE runs ADD COLUMN stop_requested_at BIGINT;
ALTER TABLE runs ADD COLUMN stopped_by TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN quiescence TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN transcript_attachment_id TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN bridge_version TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN platform_version TEXT NOT NULL DEFAULT '';
