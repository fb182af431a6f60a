-- 0032: look-alike names, second rule set. The skeleton now also drops
-- combining marks ("admín" looks like "admin") and folds Latin small
-- capitals ("ʙob" looks like "bob"), so the skeletons stored under 0014 are
-- out of date. They are cleared here and recomputed by the gateway at start
-- (BackfillNameSkeletons), oldest name first: of two existing names that
-- now look alike, the older keeps the skeleton and the later keeps NULL
-- (both stay usable, a warning names them), and new look-alikes of either
-- are refused.
UPDATE names SET skeleton = NULL;
