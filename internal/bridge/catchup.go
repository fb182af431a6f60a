package bridge

import (
	"sort"

	"github.com/agentmail/agentmail/client"
)

// MaxCatchUp is B-7.2's limit: at most five mails per catch-up.
const MaxCatchUp = 5

// SelectCatchUp chooses the mails a catch-up delivers (B-7): only
// mail_type normal (B-7.5), not already delivered (B-7.3, the shared
// de-duplication set), oldest first (B-7.4: the inbox answers newest first),
// at most max (B-7.2). The rest stays unread in the inbox for the next
// catch-up.
func SelectCatchUp(mails []client.Mail, delivered func(mailID string) bool, max int) []client.Mail {
	out := make([]client.Mail, 0, len(mails))
	seen := map[string]bool{}
	for _, m := range mails {
		if m.MailType != client.MailTypeNormal || seen[m.MailID] {
			continue
		}
		if delivered != nil && delivered(m.MailID) {
			continue
		}
		seen[m.MailID] = true
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	if max >= 0 && len(out) > max {
		out = out[:max]
	}
	return out
}
