-- 0052: the index of a name's sessions no longer holds last_activity
-- (issue 22 item 1). Every mail moves its sender's and recipients'
-- last_activity in session_participants; with last_activity in the index
-- each of those updates also deleted and inserted an index entry, two
-- B-tree changes per participant per mail, while no query reads the
-- index in last_activity order (a name's rows are sorted by it only
-- after the lookup: LatestWorkspace). The new index finds a name's rows,
-- and its rows at a path, with the session id in the index itself, so a
-- join from a name to its sessions reads no table row.
DROP INDEX session_participants_lookup;
CREATE INDEX session_participants_member ON session_participants (name, workspace, session_id);
