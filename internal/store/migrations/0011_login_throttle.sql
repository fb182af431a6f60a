-- 0011: sign-in throttling, counted in the database so the limit holds
-- across replicas. One row per throttled key: 'user:<lower-case username>'
-- or 'addr:<remote address>'. failures counts sign-in attempts without a
-- success since the count was last cleared (an attempt is counted when it
-- starts, so parallel guesses cannot slip past the limit); last_failure is
-- the time of the latest, in unix milliseconds UTC.
CREATE TABLE login_throttle (
    throttle_key  TEXT PRIMARY KEY,
    failures      INTEGER NOT NULL,
    last_failure  BIGINT NOT NULL
);
CREATE INDEX login_throttle_last ON login_throttle (last_failure);
