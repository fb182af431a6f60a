package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/agentmail/agentmail/client"
)

// A session's mails come oldest first, and next_cursor continues in that
// order: the next page holds the newer mails.
func TestSessionMailsPageForwardInTime(t *testing.T) {
	e := newEnv(t)
	e.agent("claude")
	ann := e.person("ann")
	var ids []string
	first, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@/srv.new", Subject: "m0", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, first.MailID)
	for i := 1; i < 5; i++ {
		r, err := ann.MeSend(e.ctx(), client.SendMailRequest{To: "claude@." + first.SessionAlias, Subject: fmt.Sprint("m", i), Body: "x"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.MailID)
	}
	var got []string
	cursor := ""
	for page := 0; page < 4; page++ {
		l, err := ann.MeSessionMails(e.ctx(), first.SessionID, client.PageQuery{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range l.Mails {
			got = append(got, m.MailID)
		}
		if l.NextCursor == "" {
			break
		}
		cursor = l.NextCursor
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Fatalf("pages gave %v, want oldest first %v", got, ids)
	}
}
