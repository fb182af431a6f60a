package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentmail/agentmail/internal/search"
)

// EscapeLike escapes s for a LIKE pattern with ESCAPE '\': the wildcards
// '%' and '_' and the escape character itself match only themselves.
func EscapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// Full-text search (issue 21 item 4, migrations 0040 and 0043). Each mail
// has one row in search_docs (doc_id in indexing order) and its tokens
// (search.Doc) in the dialect's index: the FTS5 table mail_fts with rowid
// doc_id (SQLite), the tsvector column search_docs.tsv under a GIN index
// (PostgreSQL).

func (q *Q) postgres() bool { return q.d.Name() == "postgres" }

// IndexMail writes the index row of one mail; it is called in the
// transaction that stores the mail (gateway CreateMailTx), so a committed
// mail is always found. On PostgreSQL it is queued as InsertMail is.
func (q *Q) IndexMail(ctx context.Context, mailID string, createdAt time.Time, d search.Doc) error {
	if q.postgres() {
		return q.execLater(ctx, `INSERT INTO search_docs (mail_id, created_at, tsv) VALUES (?, ?, CAST(? AS tsvector))`,
			mailID, Millis(createdAt), d.TSVector())
	}
	res, err := q.Exec(ctx, `INSERT INTO search_docs (mail_id, created_at) VALUES (?, ?)`, mailID, Millis(createdAt))
	if err != nil {
		return err
	}
	subject, body, sender, head, facets := d.FTSColumns()
	if q.ftsLater {
		// The batch writes it before its commit (ftsbatch.go).
		docID, err := res.LastInsertId()
		q.ftsRows = append(q.ftsRows, ftsRow{docID: docID, cols: [5]string{subject, body, sender, head, facets}})
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO mail_fts (rowid, subject, body, sender, head, facets) VALUES (last_insert_rowid(), ?, ?, ?, ?, ?)`,
		subject, body, sender, head, facets)
	return err
}

// IndexedMail is one mail of IndexMails.
type IndexedMail struct {
	MailID    string
	CreatedAt time.Time
	Doc       search.Doc
}

// IndexMails writes the index rows of many mails with multi-row inserts
// (BulkInsertMails, backfillSearch); a mail already indexed is skipped.
func (q *Q) IndexMails(ctx context.Context, docs []IndexedMail) error {
	for start := 0; start < len(docs); start += bulkRows {
		batch := docs[start:min(start+bulkRows, len(docs))]
		var b strings.Builder
		args := make([]any, 0, len(batch)*3)
		if q.postgres() {
			b.WriteString(`INSERT INTO search_docs (mail_id, created_at, tsv) VALUES `)
			for i, d := range batch {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, CAST(? AS tsvector))")
				args = append(args, d.MailID, Millis(d.CreatedAt), d.Doc.TSVector())
			}
			b.WriteString(` ON CONFLICT (mail_id) DO NOTHING`)
			if _, err := q.Exec(ctx, b.String(), args...); err != nil {
				return err
			}
			continue
		}
		b.WriteString(`INSERT INTO search_docs (mail_id, created_at) VALUES `)
		ids := make([]any, len(batch))
		for i, d := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?)")
			args = append(args, d.MailID, Millis(d.CreatedAt))
			ids[i] = d.MailID
		}
		b.WriteString(` ON CONFLICT (mail_id) DO NOTHING RETURNING doc_id, mail_id`)
		rows, err := q.Query(ctx, b.String(), args...)
		if err != nil {
			return err
		}
		docOf := map[string]int64{}
		for rows.Next() {
			var id int64
			var mail string
			if err := rows.Scan(&id, &mail); err != nil {
				rows.Close()
				return err
			}
			docOf[mail] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		b.Reset()
		b.WriteString(`INSERT INTO mail_fts (rowid, subject, body, sender, head, facets) VALUES `)
		args = args[:0]
		n := 0
		for _, d := range batch {
			id, ok := docOf[d.MailID]
			if !ok {
				continue
			}
			if n > 0 {
				b.WriteString(", ")
			}
			n++
			b.WriteString("(?, ?, ?, ?, ?, ?)")
			subject, body, sender, head, facets := d.Doc.FTSColumns()
			args = append(args, id, subject, body, sender, head, facets)
		}
		if n == 0 {
			continue
		}
		if _, err := q.Exec(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// SearchFilter narrows SearchCandidates beyond the match expression.
type SearchFilter struct {
	// Unread keeps mails viewer received and has not read.
	Unread bool
	// After and Before bound created_at (zero: unbounded): at or after
	// After, before Before.
	After, Before time.Time
	// BeforeDoc keeps doc ids below it (0: all), the cursor of a page.
	BeforeDoc int64
}

// SearchCandidate is one mail a search matched.
type SearchCandidate struct {
	DocID  int64
	MailID string
}

// SearchCandidates answers at most limit mails matching the tier m (one of
// search.Compile's, which restricts them to viewer's own mail) and the
// filter, newest indexed first. The cost follows the matches read, not the
// size of the mailbox: FTS5 reads its doclists in rowid order and stops at
// limit (SQLite); PostgreSQL runs searchPostgres.
func (q *Q) SearchCandidates(ctx context.Context, m search.Tier, viewer string, f SearchFilter, limit int) ([]SearchCandidate, error) {
	if q.postgres() {
		return q.searchPostgres(ctx, m, viewer, f, limit)
	}
	var query strings.Builder
	var args []any
	// CROSS JOIN keeps the FTS table the outer loop, read newest first.
	query.WriteString(`SELECT d.doc_id, d.mail_id FROM mail_fts f CROSS JOIN search_docs d`)
	if f.Unread {
		query.WriteString(` CROSS JOIN mail_recipients r`)
	}
	query.WriteString(` WHERE mail_fts MATCH ? AND d.doc_id = f.rowid`)
	args = append(args, m.FTS)
	if f.Unread {
		query.WriteString(` AND r.mail_id = d.mail_id AND r.name = ? AND r.is_read = FALSE`)
		args = append(args, viewer)
	}
	// The order and bound on the FTS rowid itself, which FTS5 reads in
	// that order and stops at the limit (on d.doc_id it would sort every
	// match first).
	where, wargs := f.docBounds("f.rowid")
	query.WriteString(where)
	args = append(args, wargs...)
	query.WriteString(` ORDER BY f.rowid DESC LIMIT ?`)
	args = append(args, limit)
	return q.searchCandidates(ctx, query.String(), args...)
}

// searchWalkRows is how many of the newest index rows a PostgreSQL search
// checks one by one before it weighs walking on against asking the GIN
// index (searchPostgres).
var searchWalkRows = 2000

// searchFetchCost is what fetching and sorting one match the GIN index
// answered costs against checking one row of a walk (measured on the
// benchmark's million rows: about 1-2 µs a walked row, 10-20 µs a fetched
// match).
const searchFetchCost = 10

// searchPostgres answers SearchCandidates on PostgreSQL with plans that do
// not rest on the planner's guess of how many rows match (it multiplies
// the lexemes' frequencies, so '数据' & '据库', which occur together, look
// 20 times rarer than they are, and a lexeme too rare for its statistics
// looks common, so the planner walked every row for it). It walks the
// newest rows (within the filter's bounds) backwards by doc_id, checking
// each row's tsvector and stopping at limit: searchWalkRows of them
// first. When they hold fewer than limit matches, what they held measures
// how dense the matches are: if walking on for the rest costs less than
// fetching every older match from the GIN index (searchFetchCost each), it
// walks on, twice as far as the density says it needs, and weighs again;
// otherwise the GIN index answers every older match (a rare word: few),
// which are sorted and cut at the rest of limit.
func (q *Q) searchPostgres(ctx context.Context, m search.Tier, viewer string, f SearchFilter, limit int) ([]SearchCandidate, error) {
	join := ""
	var joinArgs []any
	if f.Unread {
		join = ` JOIN mail_recipients r ON r.mail_id = d.mail_id AND r.name = ? AND r.is_read = FALSE`
		joinArgs = []any{viewer}
	}
	bounds, boundArgs := f.docBounds("d.doc_id")
	var out []SearchCandidate
	var walked, matched int64
	below := int64(0) // the walk reads doc ids below it (0: from the newest)
	window := int64(searchWalkRows)
	for {
		where, wargs := bounds, append([]any{}, boundArgs...)
		if below > 0 {
			where += ` AND d.doc_id < ?`
			wargs = append(wargs, below)
		}
		// A LIMIT inside the subquery keeps the planner from reading the
		// GIN index for the walk.
		args := append(append([]any{}, wargs...), window)
		args = append(args, joinArgs...)
		args = append(args, m.TSQuery, limit-len(out))
		got, err := q.searchCandidates(ctx, `SELECT d.doc_id, d.mail_id FROM (SELECT doc_id, mail_id, tsv FROM search_docs d WHERE TRUE`+where+
			` ORDER BY d.doc_id DESC LIMIT ?) d`+join+` WHERE d.tsv @@ CAST(? AS tsquery) ORDER BY d.doc_id DESC LIMIT ?`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		if len(out) >= limit {
			return out, nil
		}
		// The oldest row this walk read; every row was read when it read
		// fewer than window.
		var oldest, read int64
		if err := q.QueryRow(ctx, `SELECT COALESCE(MIN(doc_id), 0), COUNT(*) FROM (SELECT doc_id FROM search_docs d WHERE TRUE`+where+
			` ORDER BY d.doc_id DESC LIMIT ?) w`, append(wargs, window)...).Scan(&oldest, &read); err != nil {
			return nil, err
		}
		if read < window {
			return out, nil
		}
		walked, matched, below = walked+read, matched+int64(len(got)), oldest
		need := int64(limit - len(out))
		// Doc ids are dense, so oldest approximates the rows older than the walk.
		if matched > 0 && need*walked/matched < searchFetchCost*matched*oldest/walked {
			window = 2*need*walked/matched + 1
			continue
		}
		break
	}
	// The older matches from the GIN index: MATERIALIZED keeps the planner
	// from walking them newest first again.
	args := append([]any{}, joinArgs...)
	args = append(args, m.TSQuery, below)
	args = append(args, boundArgs...)
	args = append(args, limit-len(out))
	older, err := q.searchCandidates(ctx, `WITH m AS MATERIALIZED (SELECT d.doc_id, d.mail_id FROM search_docs d`+join+
		` WHERE d.tsv @@ CAST(? AS tsquery) AND d.doc_id < ?`+bounds+`) SELECT doc_id, mail_id FROM m ORDER BY doc_id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	return append(out, older...), nil
}

// docBounds answers the filter's bounds on the doc id column col and on
// d.created_at as SQL conditions (each beginning " AND ") and their
// arguments.
func (f SearchFilter) docBounds(col string) (string, []any) {
	var b strings.Builder
	var args []any
	if f.BeforeDoc > 0 {
		b.WriteString(` AND ` + col + ` < ?`)
		args = append(args, f.BeforeDoc)
	}
	if !f.After.IsZero() {
		b.WriteString(` AND d.created_at >= ?`)
		args = append(args, Millis(f.After))
	}
	if !f.Before.IsZero() {
		b.WriteString(` AND d.created_at < ?`)
		args = append(args, Millis(f.Before))
	}
	return b.String(), args
}

// searchCandidates runs a query answering doc_id and mail_id rows.
func (q *Q) searchCandidates(ctx context.Context, query string, args ...any) ([]SearchCandidate, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SearchCandidate
	for rows.Next() {
		var c SearchCandidate
		if err := rows.Scan(&c.DocID, &c.MailID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ViewMails answers the mails of ids as viewer sees them (ViewMail), in no
// particular order; an id viewer neither sent nor received is absent.
func (q *Q) ViewMails(ctx context.Context, viewer string, ids []string) ([]ViewedMail, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{false, viewer}
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, viewer)
	return q.viewedMails(ctx, `SELECT `+prefixed("m.", mailCols)+`, COALESCE(r.role, ''), COALESCE(r.is_read, ?) FROM mails m
		LEFT JOIN mail_recipients r ON r.mail_id = m.mail_id AND r.name = ?
		WHERE m.mail_id IN (`+InPlaceholders(len(ids))+`) AND (m.from_name = ? OR r.name IS NOT NULL)`, args...)
}

// searchBackfillBatch is how many mails one transaction of backfillSearch
// indexes.
const searchBackfillBatch = 2000

// backfillSearch indexes the mails stored before migration 0040, once
// (search_state.backfilled), in mail id order, a batch per transaction.
func (s *Store) backfillSearch(ctx context.Context) error {
	var done bool
	// Read in a write: the write loop holds SQLite's one writer connection.
	if err := s.Write(ctx, func(q *Q) error {
		return q.QueryRow(ctx, `SELECT backfilled FROM search_state WHERE id = 1`).Scan(&done)
	}); err != nil || done {
		return err
	}
	after := ""
	for {
		var n int
		err := s.Write(ctx, func(q *Q) error {
			rows, err := q.Query(ctx, `SELECT mail_id, session_id, from_name, subject, body, created_at FROM mails
				WHERE mail_id > ? ORDER BY mail_id LIMIT ?`, after, searchBackfillBatch)
			if err != nil {
				return err
			}
			var docs []IndexedMail
			var ids []string
			for rows.Next() {
				var d IndexedMail
				var created int64
				if err := rows.Scan(&d.MailID, &d.Doc.SessionID, &d.Doc.From, &d.Doc.Subject, &d.Doc.Body, &created); err != nil {
					rows.Close()
					return err
				}
				d.CreatedAt, d.Doc.Sender = FromMillis(created), d.Doc.From
				docs = append(docs, d)
				ids = append(ids, d.MailID)
			}
			rows.Close()
			if err := rows.Err(); err != nil || len(docs) == 0 {
				return err
			}
			if err := q.addFacets(ctx, docs, ids); err != nil {
				return err
			}
			n, after = len(docs), docs[len(docs)-1].MailID
			return q.IndexMails(ctx, docs)
		})
		if err != nil {
			return err
		}
		if n < searchBackfillBatch {
			break
		}
	}
	return s.Write(ctx, func(q *Q) error {
		_, err := q.Exec(ctx, `UPDATE search_state SET backfilled = TRUE WHERE id = 1`)
		return err
	})
}

// addFacets sets the recipients and the attachment facet of docs, the
// mails ids (in the same order) being indexed.
func (q *Q) addFacets(ctx context.Context, docs []IndexedMail, ids []string) error {
	recips, err := q.RecipientsOf(ctx, ids)
	if err != nil {
		return err
	}
	atts, err := q.AttachmentIDs(ctx, ids)
	if err != nil {
		return err
	}
	for i := range docs {
		for _, r := range recips[docs[i].MailID] {
			docs[i].Doc.To = append(docs[i].Doc.To, r.Name)
		}
		docs[i].Doc.HasAttachment = len(atts[docs[i].MailID]) > 0
	}
	return nil
}

// SearchPairs reports whether every search index row has its character
// pairs (search.Doc.TSVector), so that search.Compile may ask for them
// (search.CompileOptions.Pairs). SQLite: always (FTS5 reads phrases from
// its own lists). PostgreSQL: once the rows written before migration 0049
// have been indexed again (indexPairs); until then a Chinese word is
// asked as the phrase of its characters, which finds the same mails.
func (s *Store) SearchPairs() bool { return s.dialect.Name() != "postgres" || s.pairsReady.Load() }

// pairsBatch is how many index rows one transaction of indexPairs writes
// again: small, so that the sends it runs beside wait little for it.
var pairsBatch = 500

// pairsRetry is how long indexPairs waits after a failed batch.
const pairsRetry = time.Minute

// startPairIndexing sets SearchPairs when search_state.pairs_done says
// every row has its pairs, and otherwise indexes the rest in the
// background (indexPairs) until it is done or the store closes.
func (s *Store) startPairIndexing(ctx context.Context, log *slog.Logger) error {
	var done bool
	if err := s.Read().QueryRow(ctx, `SELECT pairs_done FROM search_state WHERE id = 1`).Scan(&done); err != nil {
		return fmt.Errorf("store: read search_state: %w", err)
	}
	if done {
		s.pairsReady.Store(true)
		return nil
	}
	if log == nil {
		log = slog.Default()
	}
	bg, stop := context.WithCancel(context.Background())
	s.pairsStop, s.pairsDone = stop, make(chan struct{})
	go func() {
		defer close(s.pairsDone)
		for bg.Err() == nil {
			err := s.indexPairs(bg)
			if err == nil {
				s.pairsReady.Store(true)
				log.Info("store: the search index has the character pairs of every mail; Chinese words are looked up by them")
				return
			}
			if bg.Err() != nil {
				return
			}
			log.Error("store: indexing the character pairs of stored mails failed; Chinese searches stay slower until it succeeds, retrying",
				"err", err, "retry_in", pairsRetry)
			select {
			case <-bg.Done():
			case <-time.After(pairsRetry):
			}
		}
	}()
	return nil
}

// indexPairs writes the index rows of the mails indexed before migration
// 0049 again, with their character pairs, pairsBatch rows per transaction
// in doc_id order from search_state.pairs_through, and sets pairs_done
// after the last. Each batch locks the search_state row, so replicas
// starting together share the work instead of repeating it; rows written
// meanwhile by sends have their pairs already and are written again
// unchanged. A search meanwhile asks for characters, not pairs
// (SearchPairs), so it finds every mail all along.
func (s *Store) indexPairs(ctx context.Context) error {
	for {
		var finished bool
		err := s.WriteShared(ctx, func(q *Q) error {
			var through int64
			if err := q.QueryRow(ctx, `SELECT pairs_through, pairs_done FROM search_state WHERE id = 1 FOR UPDATE`).Scan(&through, &finished); err != nil || finished {
				return err
			}
			rows, err := q.Query(ctx, `SELECT d.doc_id, m.mail_id, m.session_id, m.from_name, m.subject, m.body, m.created_at
				FROM search_docs d JOIN mails m ON m.mail_id = d.mail_id WHERE d.doc_id > ? ORDER BY d.doc_id LIMIT ?`, through, pairsBatch)
			if err != nil {
				return err
			}
			var docs []IndexedMail
			var docIDs []int64
			var ids []string
			for rows.Next() {
				var d IndexedMail
				var docID, created int64
				if err := rows.Scan(&docID, &d.MailID, &d.Doc.SessionID, &d.Doc.From, &d.Doc.Subject, &d.Doc.Body, &created); err != nil {
					rows.Close()
					return err
				}
				d.CreatedAt, d.Doc.Sender = FromMillis(created), d.Doc.From
				docs, docIDs, ids = append(docs, d), append(docIDs, docID), append(ids, d.MailID)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(docs) == 0 {
				finished = true
				_, err := q.Exec(ctx, `UPDATE search_state SET pairs_done = TRUE WHERE id = 1`)
				return err
			}
			if err := q.addFacets(ctx, docs, ids); err != nil {
				return err
			}
			var b strings.Builder
			args := make([]any, 0, 2*len(docs))
			b.WriteString(`UPDATE search_docs AS d SET tsv = CAST(v.tsv AS tsvector) FROM (VALUES `)
			for i, d := range docs {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(CAST(? AS BIGINT), CAST(? AS TEXT))")
				args = append(args, docIDs[i], d.Doc.TSVector())
			}
			b.WriteString(`) AS v(doc_id, tsv) WHERE d.doc_id = v.doc_id`)
			if _, err := q.Exec(ctx, b.String(), args...); err != nil {
				return err
			}
			_, err = q.Exec(ctx, `UPDATE search_state SET pairs_through = ? WHERE id = 1`, docIDs[len(docIDs)-1])
			return err
		})
		if err != nil || finished {
			return err
		}
	}
}

// ExportMails answers at most limit mails after the mail id after in id
// order: those viewer sent or received, or every mail when viewer is ""
// (an admin's export), with viewer's own state.
func (q *Q) ExportMails(ctx context.Context, viewer, after string, limit int) ([]ViewedMail, error) {
	if viewer == "" {
		return q.viewedMails(ctx, `SELECT `+mailCols+`, '', FALSE FROM mails WHERE mail_id > ? ORDER BY mail_id LIMIT ?`, after, limit)
	}
	return q.viewedMails(ctx, `SELECT `+prefixed("m.", mailCols)+`, COALESCE(r.role, ''), COALESCE(r.is_read, ?) FROM mails m
		LEFT JOIN mail_recipients r ON r.mail_id = m.mail_id AND r.name = ?
		WHERE m.mail_id > ? AND (m.from_name = ? OR r.name IS NOT NULL) ORDER BY m.mail_id LIMIT ?`, false, viewer, after, viewer, limit)
}
