-- 0013: a permission request keeps a one-line summary of the tool call it
-- asks about ("Bash: rm -rf build/"), for lists that show no mail body.
-- Requests stored before have '' and are summarised by their tool name.
ALTER TABLE permission_requests ADD COLUMN tool_summary TEXT NOT NULL DEFAULT '';
