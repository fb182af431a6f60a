-- 0050: the agent's bridge lease. One bridge process of an agent at a
-- time: the bridge presents an instance id (random, made at its start)
-- with its host name and process id when it registers and with every
-- heartbeat. bridge_instance holds the lease while bridge_seen_at is
-- within the gateway's online time (Config.OnlineWithin, 90 s); another instance
-- is refused until then, so a second bridge of the agent cannot end the
-- first one's live runs when it connects. '' none (no bridge has
-- presented an instance: older bridges take no lease). Times are unix
-- milliseconds UTC.
ALTER TABLE agents ADD COLUMN bridge_instance TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN bridge_host TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN bridge_pid BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN bridge_connected_at BIGINT;
ALTER TABLE agents ADD COLUMN bridge_seen_at BIGINT;
