package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/search"
	"github.com/agentmail/agentmail/internal/store"
)

// Bounds of a mail search.
const (
	// MaxSearchRunes bounds the text of a mail search.
	MaxSearchRunes = 200
	// SearchDefaultLimit and SearchMaxLimit bound the hits of one page.
	SearchDefaultLimit = 20
	SearchMaxLimit     = 100
	// searchSnippetRunes is the length of a hit's body snippet.
	searchSnippetRunes = 160
)

// searchMaxChecked bounds the candidates of Verify tiers one page loads
// and checks (search.Tier.Verify); a variable for a test of the bound.
var searchMaxChecked = 1000

// SearchRequest is one page of a mail search.
type SearchRequest struct {
	Q      string
	Sort   string // client.SearchRelevance ("" too) or client.SearchNewest
	Limit  int    // 1..SearchMaxLimit
	Cursor string // a NextCursor of the same query and sort, or ""
}

// searchDoc is the search document of a mail being stored (CreateMailTx):
// subject, body and sender name as text; sender, recipients (observers
// included: they received it), session and attachments as facets.
func searchDoc(m store.MailRow, recips []store.RecipientRow, hasAttachment bool) search.Doc {
	d := search.Doc{Subject: m.Subject, Body: m.Body, Sender: m.FromName, From: m.FromName,
		SessionID: m.SessionID, HasAttachment: hasAttachment}
	for _, r := range recips {
		d.To = append(d.To, r.Name)
	}
	return d
}

// Search answers the mails the principal sent or received that match the
// query (issue 21 item 4; GET /api/v1/me/mail/search for people,
// GET /api/v1/mail/search for agents; the query language is
// search.Parse's). Only the caller's own mail is ever read: the index is
// asked for mails carrying the caller's party facet, so neither another's
// mail nor a count of it can come back. An agent calling with a turn token
// finds only mail of its turn's session and the sessions delegated from it.
//
// sort=relevance (default) orders every match by its tier (search.Compile:
// all the words in the subject or sender's name, some of them, only in the
// body), newest first within a tier; sort=newest orders every match newest
// first. Either reads at most a page and one mail per tier from the index
// (each tier's list newest first), whatever the number of matches. Each hit
// carries its tier's score and its subject and a body snippet as
// highlighted plain-text spans. NextCursor is bound to the query and order
// it was given for. A tier whose index answer is a superset (search.Tier
// Verify: a Chinese word of three characters or more on PostgreSQL) has
// each candidate checked against the mail itself; a page checks at most
// searchMaxChecked of them and may then hold fewer than Limit hits with a
// NextCursor.
//
// Errors: 400 naming q when it is empty after trimming, longer than
// MaxSearchRunes, holds a NUL, is not UTF-8 or does not parse (a filter
// without a value, is:read, before:yesterday, only excluded words, ...);
// 400 naming sort for an order this endpoint does not know; 400 naming
// cursor (code cursor_mismatch) for a cursor of another query or order,
// and for one this endpoint did not give.
func (s *Service) Search(ctx context.Context, p *Principal, req SearchRequest) (*client.SearchResults, error) {
	text := strings.TrimSpace(req.Q)
	switch {
	case text == "":
		return nil, Invalid("q", "q is required", "send the words to look for, e.g. ?q=deploy")
	case !utf8.ValidString(text):
		return nil, InvalidCode("invalid_utf8", "q", "q is not valid UTF-8 text", "send the query encoded as UTF-8")
	case strings.IndexByte(text, 0) >= 0:
		return nil, InvalidCode("nul_character", "q", "q contains a NUL character (U+0000)", "remove it")
	case utf8.RuneCountInString(text) > MaxSearchRunes:
		return nil, Invalid("q", fmt.Sprintf("q is longer than %d characters", MaxSearchRunes), "search for fewer words")
	}
	query, err := search.Parse(text)
	var qe *search.Error
	if errors.As(err, &qe) {
		return nil, Invalid("q", qe.Reason, qe.Fix)
	} else if err != nil {
		return nil, err
	}
	if query.Empty() {
		return nil, Invalid("q", "q has no word to look for", "send letters or digits, e.g. ?q=deploy")
	}
	order := req.Sort
	if order == "" {
		order = client.SearchRelevance
	}
	if order != client.SearchRelevance && order != client.SearchNewest {
		return nil, Invalid("sort", fmt.Sprintf("sort %q is not an order", req.Sort), "use sort=relevance or sort=newest")
	}
	limit := req.Limit
	if limit <= 0 {
		limit = SearchDefaultLimit
	}
	limit = min(limit, SearchMaxLimit)
	rq := s.Read()
	var sessionIDs []string
	for _, name := range query.Sessions {
		id := name
		if row, _, err := rq.SessionByAnyAlias(ctx, name); err == nil {
			id = row.SessionID
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		sessionIDs = append(sessionIDs, id)
	}
	match := search.Compile(query, p.Name, sessionIDs,
		search.CompileOptions{Ranked: order == client.SearchRelevance, Pairs: s.Store.SearchPairs()})
	fp := searchFingerprint(query, order)
	at, err := parseSearchCursor(req.Cursor, fp, len(match.Tiers))
	if err != nil {
		return nil, err
	}
	// The page and one more: tier by tier from the cursor's, each newest
	// first, until limit+1 candidates are in hand. A Verify tier's
	// candidates are loaded and checked as they come (search.Match.Holds),
	// those that do not hold are passed over, and at most
	// searchMaxChecked are read for one page: a page cut short by that
	// bound has fewer hits and a next_cursor where the reading stopped.
	type cand struct {
		store.SearchCandidate
		tier int
	}
	var cands []cand
	byID := map[string]store.ViewedMail{}
	out := &client.SearchResults{Hits: []client.SearchHit{}, Sort: order}
	checked := 0
tiers:
	for tier := at.tier; tier < len(match.Tiers) && len(cands) <= limit; tier++ {
		filter := store.SearchFilter{Unread: query.Unread, After: query.After, Before: query.Before}
		if tier == at.tier {
			filter.BeforeDoc = at.beforeDoc
		}
		verify := match.Tiers[tier].Verify
		for len(cands) <= limit {
			want := limit + 1 - len(cands)
			got, err := rq.SearchCandidates(ctx, match.Tiers[tier], p.Name, filter, want)
			if err != nil {
				return nil, err
			}
			if !verify {
				for _, c := range got {
					cands = append(cands, cand{c, tier})
				}
				break
			}
			if err := loadSearchHits(ctx, rq, p.Name, got, byID); err != nil {
				return nil, err
			}
			for _, c := range got {
				if r, ok := byID[c.MailID]; ok && match.Holds(tier, r.Subject, r.Body, r.FromName) {
					cands = append(cands, cand{c, tier})
				}
			}
			if len(got) < want {
				break // the tier has no more
			}
			filter.BeforeDoc = got[len(got)-1].DocID
			if checked += len(got); checked >= searchMaxChecked && len(cands) <= limit {
				out.NextCursor = searchCursor{fp: fp, tier: tier, beforeDoc: filter.BeforeDoc}.String()
				break tiers
			}
		}
	}
	if len(cands) > limit {
		last := cands[limit-1]
		out.NextCursor = searchCursor{fp: fp, tier: last.tier, beforeDoc: last.DocID}.String()
		cands = cands[:limit]
	}
	var missing []store.SearchCandidate
	for _, c := range cands {
		if _, ok := byID[c.MailID]; !ok {
			missing = append(missing, c.SearchCandidate)
		}
	}
	if err := loadSearchHits(ctx, rq, p.Name, missing, byID); err != nil {
		return nil, err
	}
	inScope := map[string]bool{}
	var page []store.ViewedMail
	var scores []float64
	for _, c := range cands {
		r, ok := byID[c.MailID]
		if !ok {
			continue // the index and the mail disagree: never show what ViewMails refused
		}
		in, seen := inScope[r.SessionID]
		if !seen {
			if in, err = inTurnScope(ctx, rq, p.Name, r.SessionID); err != nil {
				return nil, err
			}
			inScope[r.SessionID] = in
		}
		if !in {
			continue
		}
		page = append(page, r)
		scores = append(scores, match.Tiers[c.tier].Score)
	}
	views, err := s.mailViewsFor(ctx, rq, p.Name, page)
	if err != nil {
		return nil, err
	}
	for i, r := range page {
		out.Hits = append(out.Hits, client.SearchHit{Mail: views[i], Score: scores[i],
			Subject: textSpans(search.Highlight(query, r.Subject)),
			Snippet: textSpans(search.Snippet(query, r.Body, searchSnippetRunes))})
	}
	return out, nil
}

// loadSearchHits adds the mails of cands that viewer may read to byID
// (store.Q.ViewMails: an id viewer neither sent nor received stays absent).
func loadSearchHits(ctx context.Context, rq *store.Q, viewer string, cands []store.SearchCandidate, byID map[string]store.ViewedMail) error {
	if len(cands) == 0 {
		return nil
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.MailID
	}
	rows, err := rq.ViewMails(ctx, viewer, ids)
	if err != nil {
		return err
	}
	for _, r := range rows {
		byID[r.MailID] = r
	}
	return nil
}

// searchFingerprint identifies a query and order: the parsed query (so
// that spacing and letter case of filters do not matter) and the order,
// hashed. A cursor carries it, so a cursor of another search is refused.
func searchFingerprint(q search.Query, order string) string {
	b, _ := json.Marshal(struct {
		Q     search.Query
		Order string
	}{q, order})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// searchCursor is a NextCursor: the search it belongs to (fingerprint),
// and where the next page begins: in tier, below the doc id beforeDoc.
type searchCursor struct {
	fp        string
	tier      int
	beforeDoc int64
}

// String answers the cursor as sent: "s1.<fingerprint>.<tier>.<doc id>".
func (c searchCursor) String() string {
	return fmt.Sprintf("s1.%s.%d.%d", c.fp, c.tier, c.beforeDoc)
}

// parseSearchCursor reads a NextCursor of the search fp with tiers tiers;
// "" is the first page.
func parseSearchCursor(c, fp string, tiers int) (searchCursor, error) {
	if c == "" {
		return searchCursor{fp: fp}, nil
	}
	parts := strings.Split(c, ".")
	if len(parts) != 4 || parts[0] != "s1" {
		return searchCursor{}, InvalidCode("cursor_mismatch", "cursor", "cursor is not one this search gave",
			"send the next_cursor of the previous page of the same query, or none to start from the first page")
	}
	if parts[1] != fp {
		return searchCursor{}, InvalidCode("cursor_mismatch", "cursor", "cursor belongs to another search (a different query or order)",
			"send the next_cursor the previous page of this same query and order gave, or none to start from the first page")
	}
	tier, err1 := strconv.Atoi(parts[2])
	doc, err2 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || tier < 0 || tier >= tiers || doc <= 0 {
		return searchCursor{}, InvalidCode("cursor_mismatch", "cursor", "cursor is not one this search gave",
			"send the next_cursor of the previous page of the same query, or none to start from the first page")
	}
	return searchCursor{fp: fp, tier: tier, beforeDoc: doc}, nil
}

func textSpans(in []search.Span) []client.TextSpan {
	out := make([]client.TextSpan, len(in))
	for i, s := range in {
		out[i] = client.TextSpan{Text: s.Text, Match: s.Match}
	}
	return out
}
