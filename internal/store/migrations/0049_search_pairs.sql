-- 0049: Chinese and Japanese character pairs in the PostgreSQL search index
-- (issue 21 item 4; internal/search index.go TSVector): two adjacent such
-- characters are also one lexeme ('数据' beside '数' and '据'), so that a
-- Chinese word is a GIN lookup instead of a phrase of single characters
-- checked row by row. Rows written before this migration lack the pairs:
-- the gateway writes them again in the background, in doc_id order and a
-- batch per transaction, recording its progress in pairs_through
-- (store.indexPairs), and sets pairs_done after the last; until then a
-- search asks for the characters' phrase, which finds the same mails. An
-- empty index (a new database) has nothing to write again. SQLite's FTS5
-- index reads phrases from its own lists and needs no pairs.
ALTER TABLE search_state ADD COLUMN pairs_through BIGINT NOT NULL DEFAULT 0;
ALTER TABLE search_state ADD COLUMN pairs_done BOOLEAN NOT NULL DEFAULT FALSE;
-- {{postgres}}
UPDATE search_state SET pairs_done = TRUE WHERE NOT EXISTS (SELECT 1 FROM search_docs);
-- {{end}}
-- {{sqlite}}
UPDATE search_state SET pairs_done = TRUE;
-- {{end}}
