package gateway

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
// sort=relevance (default) ranks the newest client.SearchWindow matches by
// search.Score, ties newest first, and pages through that window;
// sort=newest pages through every match, newest first. Each hit carries
// its subject and a body snippet as highlighted plain-text spans.
//
// Errors: 400 naming q when it is empty after trimming, longer than
// MaxSearchRunes, holds a NUL, is not UTF-8 or has a malformed filter
// (is:read, before:yesterday, ...); 400 naming sort or cursor for a value
// this endpoint did not give.
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
	offset, beforeDoc, err := parseSearchCursor(req.Cursor, order)
	if err != nil {
		return nil, err
	}

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
	match := search.Compile(query, p.Name, sessionIDs)
	filter := store.SearchFilter{Unread: query.Unread, After: query.After, Before: query.Before, BeforeDoc: beforeDoc}
	want := client.SearchWindow
	if order == client.SearchNewest {
		want = limit + 1
	}
	cands, err := rq.SearchCandidates(ctx, match, p.Name, filter, want)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.MailID
	}
	rows, err := rq.ViewMails(ctx, p.Name, ids)
	if err != nil {
		return nil, err
	}
	byID := map[string]store.ViewedMail{}
	for _, r := range rows {
		byID[r.MailID] = r
	}
	type scored struct {
		cand  store.SearchCandidate
		row   store.ViewedMail
		score float64
	}
	inScope := map[string]bool{}
	var found []scored
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
		sc := 0.0
		if order == client.SearchRelevance {
			sc = search.Score(query, r.Subject, r.FromName, r.Body)
		}
		found = append(found, scored{cand: c, row: r, score: sc})
	}
	out := &client.SearchResults{Hits: []client.SearchHit{}, Sort: order}
	var page []scored
	if order == client.SearchRelevance {
		sort.SliceStable(found, func(i, j int) bool {
			if found[i].score != found[j].score {
				return found[i].score > found[j].score
			}
			return found[i].cand.DocID > found[j].cand.DocID
		})
		if offset < len(found) {
			page = found[offset:min(offset+limit, len(found))]
		}
		if offset+limit < len(found) {
			out.NextCursor = "r" + strconv.Itoa(offset+limit)
		}
	} else {
		page = found[:min(limit, len(found))]
		if len(cands) > limit {
			out.NextCursor = "n" + strconv.FormatInt(cands[limit-1].DocID, 10)
		}
	}
	pageRows := make([]store.ViewedMail, len(page))
	for i, h := range page {
		pageRows[i] = h.row
	}
	views, err := s.mailViewsFor(ctx, rq, p.Name, pageRows)
	if err != nil {
		return nil, err
	}
	for i, h := range page {
		out.Hits = append(out.Hits, client.SearchHit{Mail: views[i], Score: h.score,
			Subject: textSpans(search.Highlight(query, h.row.Subject)),
			Snippet: textSpans(search.Snippet(query, h.row.Body, searchSnippetRunes))})
	}
	return out, nil
}

// parseSearchCursor reads a NextCursor: "r<offset>" within a relevance
// window, "n<doc id>" for newest first.
func parseSearchCursor(c, order string) (offset int, beforeDoc int64, err error) {
	if c == "" {
		return 0, 0, nil
	}
	bad := Invalid("cursor", "cursor is not one this search gave", "send the next_cursor of the previous page of the same query, or none")
	if order == client.SearchRelevance && strings.HasPrefix(c, "r") {
		n, err := strconv.Atoi(c[1:])
		if err != nil || n < 0 || n >= client.SearchWindow {
			return 0, 0, bad
		}
		return n, 0, nil
	}
	if order == client.SearchNewest && strings.HasPrefix(c, "n") {
		n, err := strconv.ParseInt(c[1:], 10, 64)
		if err != nil || n <= 0 {
			return 0, 0, bad
		}
		return 0, n, nil
	}
	return 0, 0, bad
}

func textSpans(in []search.Span) []client.TextSpan {
	out := make([]client.TextSpan, len(in))
	for i, s := range in {
		out[i] = client.TextSpan{Text: s.Text, Match: s.Match}
	}
	return out
}
