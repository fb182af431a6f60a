-- 0048: a bridge that connects lists its agent's runs that have not ended
-- (running, queued, idle) to end the ones it does not hold any more: a
-- restart or a crash left them (issue 16). The index keeps that listing
-- bounded by the agent's own runs.
CREATE INDEX runs_agent_state ON runs (agent_name, state);
