-- 0014: look-alike names. Each claimed name keeps its Unicode confusable
-- skeleton (UTS #39, computed by the gateway over the NFKC case-folded name),
-- and no two names may share one: "bob", "bоb" (Cyrillic о) and "ｂob"
-- (full width) have the same skeleton. NULL is a name claimed before this
-- migration whose skeleton the gateway has not filled in yet (it does at
-- start), or one of two older names that already looked alike (the later
-- one keeps NULL; both stay usable). NULLs never clash in a unique index,
-- on SQLite and PostgreSQL alike.
ALTER TABLE names ADD COLUMN skeleton TEXT;
CREATE UNIQUE INDEX names_skeleton ON names (skeleton);
