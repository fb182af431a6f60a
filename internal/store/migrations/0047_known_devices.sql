-- 0047: browsers and clients that signed in to an account before (device
-- cookies). A sign-in that presents such a device's token is counted under
-- the device ('device:<token hash>' in login_throttle) instead of the
-- username, so failures from elsewhere, an attacker's guesses among them,
-- cannot lock the person out of the browser they always use.
-- token_hash is the SHA-256 of the agentmail_device cookie (hex); times are
-- unix milliseconds UTC. At most a bounded number of devices per username
-- are kept (the oldest are dropped).
CREATE TABLE known_devices (
    token_hash    TEXT PRIMARY KEY,
    username      TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT NOT NULL
);
CREATE INDEX known_devices_user ON known_devices (username, last_used_at);
