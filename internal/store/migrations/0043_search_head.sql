-- 0043: the search index gains head tokens (issue 21 item 4; internal/search
-- index.go): the subject's and sender name's tokens a second time, marked,
-- so that a relevance search reads the mails with the words in their
-- subject from a list of their own (SQLite: the FTS5 column head;
-- PostgreSQL: lexemes "h:token" in the tsvector). Every mail is indexed
-- again by the gateway at its next start (store.backfillSearch, in mail id
-- order, a batch per transaction).
-- {{sqlite}}
DROP TABLE mail_fts;
CREATE VIRTUAL TABLE mail_fts USING fts5(subject, body, sender, head, facets,
    content='', columnsize=0, prefix='2 3',
    tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'");
-- {{end}}
DELETE FROM search_docs;
UPDATE search_state SET backfilled = FALSE WHERE id = 1;
