-- 0042: the run a permission request belongs to (issue 16, B-9.2): the
-- asking agent's run of the session that was running when the request
-- arrived, '' when none was. A stop of that run closes the request.
ALTER TABLE permission_requests ADD COLUMN run_id TEXT NOT NULL DEFAULT '';
CREATE INDEX permission_requests_run ON permission_requests (run_id);
