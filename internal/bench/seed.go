package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmail/agentmail/internal/address"
	"github.com/agentmail/agentmail/internal/store"
)

// seedChunk is how many mails one seeding transaction holds.
const seedChunk = 20000

// seed stores total mails from admin in session sessionID with direct
// batched inserts: share of them to the agent "inbox" (every second one of
// those already read), the rest spread over the agents a0..a<others-1>.
// It answers how many went to "inbox". Subjects and bodies are drawn from
// seedWords (search.go), and the search index is written with them.
func seed(ctx context.Context, st *store.Store, sessionID string, total int, share float64, others int) (int, error) {
	sess, err := st.Read().GetSession(ctx, sessionID)
	if err != nil {
		return 0, err
	}
	every := int(1 / share)
	if every < 1 {
		every = 1
	}
	mine := 0
	base := time.Now().Add(-time.Duration(total) * time.Millisecond).UTC()
	for start := 0; start < total; start += seedChunk {
		end := min(start+seedChunk, total)
		mails := make([]store.MailRow, 0, end-start)
		recips := make([]store.RecipientRow, 0, end-start)
		for i := start; i < end; i++ {
			id := store.NewID()
			at := base.Add(time.Duration(i) * time.Millisecond)
			subject, body := seedText(i) // search.go
			mails = append(mails, store.MailRow{MailID: id, SessionID: sessionID, FromName: "admin", FromKind: store.KindPerson,
				FromAddress: address.Format("admin", "", sess.Alias), Subject: fmt.Sprintf("%s %d", subject, i), Body: body,
				MailType: "normal", CreatedAt: at})
			name := fmt.Sprintf("a%d", i%others)
			read := false
			if i%every == 0 {
				name = "inbox"
				read = mine%2 == 1
				mine++
			}
			r := store.RecipientRow{MailID: id, Name: name, Kind: store.KindAgent, Role: "to",
				Address: address.Format(name, "/bench", sess.Alias), Workspace: "/bench", Read: read}
			if read {
				r.ReadAt = &at
			}
			recips = append(recips, r)
		}
		if err := st.Write(ctx, func(q *store.Q) error { return q.BulkInsertMails(ctx, mails, recips) }); err != nil {
			return 0, err
		}
	}
	return mine, nil
}
