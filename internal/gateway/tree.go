package gateway

import (
	"context"
	"errors"
	"strings"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// MaxTreeNodes bounds the nodes one tree computation reads.
const MaxTreeNodes = 10000

// TreeQuery selects a window of a conversation tree: Before nodes before
// and After nodes after the anchor. Without a cursor the anchor is the
// focus mail and is included; with BeforeCursor ("b:<id>") only older nodes
// are answered, with AfterCursor ("a:<id>") only newer ones.
type TreeQuery struct {
	Before int
	After  int
	Cursor string
}

// Tree answers the conversation tree around a mail the person can see
// (seed 001 "conversation tree"): parent_mail_id links followed with a
// recursive query, across sessions through forwards, in conversation order
// (depth first, children by time), paged in both directions from the mail.
// Nodes the person neither sent nor received are left out.
func (s *Service) Tree(ctx context.Context, p *Principal, id string, tq TreeQuery) (*client.Tree, error) {
	q := s.Read()
	if _, err := viewMail(ctx, q, id, p.Name); errors.Is(err, store.ErrNotFound) {
		return nil, ErrMailNotFound
	} else if err != nil {
		return nil, err
	}
	root, err := q.TreeRoot(ctx, id)
	if err != nil {
		return nil, err
	}
	rows, err := q.TreeNodes(ctx, root, p.Name, MaxTreeNodes)
	if err != nil {
		return nil, err
	}
	var nodes []store.TreeNodeRow
	for _, n := range rows {
		if n.Visible {
			nodes = append(nodes, n)
		}
	}
	index := func(mailID string) int {
		for i, n := range nodes {
			if n.MailID == mailID {
				return i
			}
		}
		return -1
	}
	lo, hi := 0, 0 // window [lo, hi)
	switch {
	case tq.Cursor == "":
		f := index(id)
		lo, hi = max(0, f-tq.Before), min(len(nodes), f+tq.After+1)
	case strings.HasPrefix(tq.Cursor, "b:"):
		a := index(strings.TrimPrefix(tq.Cursor, "b:"))
		if a < 0 {
			return nil, Invalid("cursor", "cursor names no node of this tree", "pass before_cursor back unchanged")
		}
		lo, hi = max(0, a-tq.Before), a
	case strings.HasPrefix(tq.Cursor, "a:"):
		a := index(strings.TrimPrefix(tq.Cursor, "a:"))
		if a < 0 {
			return nil, Invalid("cursor", "cursor names no node of this tree", "pass after_cursor back unchanged")
		}
		lo, hi = a+1, min(len(nodes), a+1+tq.After)
	default:
		return nil, Invalid("cursor", "cursor must come from before_cursor or after_cursor", "")
	}
	out := &client.Tree{RootID: root, FocusID: id, Nodes: []client.TreeNode{}, Total: len(nodes)}
	aliases := map[string]string{}
	for _, n := range nodes[lo:hi] {
		alias, ok := aliases[n.SessionID]
		if !ok {
			sess, err := q.GetSession(ctx, n.SessionID)
			if err != nil {
				return nil, err
			}
			alias = sess.Alias
			aliases[n.SessionID] = alias
		}
		out.Nodes = append(out.Nodes, client.TreeNode{MailID: n.MailID, ParentMailID: n.ParentMailID, SessionID: n.SessionID,
			SessionAlias: alias, FromName: n.FromName, Subject: n.Subject, Snippet: store.Snippet(n.Body, 140),
			MailType: n.MailType, Depth: n.Depth, CreatedAt: n.CreatedAt})
	}
	out.HasBefore, out.HasAfter = lo > 0, hi < len(nodes)
	if out.HasBefore {
		out.BeforeCursor = "b:" + nodes[lo].MailID
	}
	if out.HasAfter {
		out.AfterCursor = "a:" + nodes[hi-1].MailID
	}
	return out, nil
}
