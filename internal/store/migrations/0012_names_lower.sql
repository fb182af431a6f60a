-- 0012: names are case-insensitive. The gateway stores and compares them in
-- lower case; this index makes sure two names differing only in case (Ann
-- and ann) can never both exist, whatever path claimed them.
CREATE UNIQUE INDEX names_lower ON names (lower(name));
