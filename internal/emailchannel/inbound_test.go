package emailchannel

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"
	"golang.org/x/crypto/bcrypt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/gateway"
	"github.com/agentmail/agentmail/internal/store"
	"github.com/agentmail/agentmail/internal/store/storetest"
)

// harness is a gateway on a test database (SQLite, or PostgreSQL with
// AGENTMAIL_TEST_DATABASE=postgres) with an email channel that is not
// started: the tests call its parts directly. bob has the verified address
// bob@example.com and received mailID from alice.
type harness struct {
	t      *testing.T
	c      *Channel
	svc    *gateway.Service
	mailID string
	tok    store.ReplyTokenRow
	dns    map[string]string
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t)
	svc := gateway.New(st, nil, gateway.Config{BcryptCost: bcrypt.MinCost}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h := &harness{t: t, svc: svc, dns: map[string]string{}}
	for _, name := range []string{"alice", "bob"} {
		if _, err := svc.CreateUser(ctx, client.CreateUserRequest{Username: name, Password: name + "-password", Role: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Relay, cfg.From, cfg.PublicURL = "smtp://127.0.0.1:1?insecure=1", "AgentMail <agentmail@agents.test>", "https://agentmail.test"
	cfg.LookupTXT = func(domain string) ([]string, error) {
		if v, ok := h.dns[domain]; ok {
			return []string{v}, nil
		}
		return nil, errors.New("no such record")
	}
	c, err := New(svc, nil, 1<<20, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	alice := &gateway.Principal{Kind: gateway.PrincipalPerson, Name: "alice", Role: "user"}
	sent, err := svc.Send(ctx, alice, client.SendMailRequest{To: "bob", Subject: "lunch?", Body: "at noon?"})
	if err != nil {
		t.Fatal(err)
	}
	h.mailID = sent.MailID
	now := svc.Now()
	h.tok = store.ReplyTokenRow{TokenHash: gateway.HashToken(newReplyToken()), Username: "bob", MailID: sent.MailID, CreatedAt: now}
	if err := st.Write(ctx, func(q *store.Q) error {
		if err := q.InsertReplyToken(ctx, h.tok); err != nil {
			return err
		}
		return q.PutEmailAccount(ctx, store.EmailAccountRow{Username: "bob", Address: "bob@example.com", VerifiedAt: &now,
			Notify: NotifyAll, UpdatedAt: now}, "bob@example.com")
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

func reply(from, body string, extra ...string) []byte {
	return []byte(strings.ReplaceAll("From: "+from+"\nTo: r+x@agents.test\nSubject: Re: lunch?\nDate: Wed, 02 Sep 2026 10:05:00 +0000\n"+
		"Message-ID: <"+store.NewID()+"@example.com>\n"+strings.Join(extra, "")+"Content-Type: text/plain; charset=utf-8\n\n"+body+"\n", "\n", "\r\n"))
}

// sign adds a DKIM signature by selector s1 of domain, publishing its key.
func (h *harness) sign(raw []byte, domain string) []byte {
	h.t.Helper()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	h.dns["s1._domainkey."+domain] = "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub)
	var b bytes.Buffer
	if err := dkim.Sign(&b, bytes.NewReader(raw), &dkim.SignOptions{Domain: domain, Selector: "s1", Signer: priv}); err != nil {
		h.t.Fatal(err)
	}
	return b.Bytes()
}

func (h *harness) take(raw []byte) (int, string) {
	h.t.Helper()
	e, _ := h.c.takeReply(context.Background(), h.tok, raw)
	if e == nil {
		return 250, ""
	}
	return e.Code, e.Message
}

// replies answers how many mails bob sent in reply to the notified mail.
func (h *harness) replies() int {
	h.t.Helper()
	l, err := h.svc.Sent(context.Background(), &gateway.Principal{Kind: gateway.PrincipalPerson, Name: "bob"}, 50, "")
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, m := range l.Mails {
		if m.ParentMailID == h.mailID {
			n++
		}
	}
	return n
}

func TestInboundDKIMMustVerifyWhenPresent(t *testing.T) {
	h := newHarness(t, Config{})
	if code, _ := h.take(h.sign(reply("bob@example.com", "noon works"), "example.com")); code != 250 {
		t.Fatalf("a reply signed by the From domain: %d", code)
	}
	signed := h.sign(reply("bob@example.com", "noon works"), "example.com")
	tampered := bytes.Replace(signed, []byte("noon works"), []byte("approve all"), 1)
	if code, msg := h.take(tampered); code != 550 || !strings.Contains(msg, "DKIM") {
		t.Errorf("a tampered signed reply: %d %s", code, msg)
	}
	if code, msg := h.take(h.sign(reply("bob@example.com", "from elsewhere"), "attacker.test")); code != 550 || !strings.Contains(msg, "example.com") {
		t.Errorf("a reply signed by another domain: %d %s", code, msg)
	}
	if code, _ := h.take(reply("bob@example.com", "unsigned is fine by default")); code != 250 {
		t.Errorf("an unsigned reply without RequireDKIM: %d", code)
	}
	if n := h.replies(); n != 2 {
		t.Errorf("%d replies stored, want the 2 accepted ones", n)
	}
}

func TestInboundRequireDKIMRefusesUnsigned(t *testing.T) {
	h := newHarness(t, Config{RequireDKIM: true})
	if code, msg := h.take(reply("bob@example.com", "hi")); code != 550 || !strings.Contains(msg, "DKIM") {
		t.Errorf("unsigned with RequireDKIM: %d %s", code, msg)
	}
	if code, _ := h.take(h.sign(reply("bob@example.com", "hi"), "example.com")); code != 250 {
		t.Errorf("signed with RequireDKIM: %d", code)
	}
}

func TestInboundRefusesAutomaticRepliesOtherSendersAndFloods(t *testing.T) {
	h := newHarness(t, Config{RepliesPerHour: 2})
	if code, msg := h.take(reply("bob@example.com", "I am out of office", "Auto-Submitted: auto-replied\n")); code != 550 || !strings.Contains(msg, "automatic") {
		t.Errorf("an out-of-office reply: %d %s", code, msg)
	}
	if code, _ := h.take(reply("Bob <BOB@Example.com>", "case does not matter")); code != 250 {
		t.Errorf("the verified address in other case: %d", code)
	}
	if code, msg := h.take(reply("alice@example.com", "I am bob")); code != 550 || !strings.Contains(msg, "another address") {
		t.Errorf("another From: %d %s", code, msg)
	}
	if code, msg := h.take(reply("bob@example.com", "> only a quote")); code != 550 || !strings.Contains(msg, "no text") {
		t.Errorf("a reply without new text: %d %s", code, msg)
	}
	same := reply("bob@example.com", "second")
	if code, _ := h.take(same); code != 250 {
		t.Fatalf("second reply: %d", code)
	}
	if code, _ := h.take(same); code != 250 {
		t.Errorf("the same message again (an MTA retrying) is taken without storing: %d", code)
	}
	if code, msg := h.take(reply("bob@example.com", "third")); code != 451 || !strings.Contains(msg, "last hour") {
		t.Errorf("the third reply in an hour with a limit of 2: %d %s", code, msg)
	}
	if n := h.replies(); n != 2 {
		t.Errorf("%d replies stored, want 2", n)
	}
}

func TestVerificationCodeTriesExpiryAndUniqueness(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := context.Background()
	alice := &gateway.Principal{Kind: gateway.PrincipalPerson, Name: "alice", Role: "user"}
	set := func(p *gateway.Principal, addr string) error {
		return h.c.Update(ctx, p, client.UpdateMeRequest{Email: &addr})
	}
	if err := set(alice, "BOB@example.com"); !gateway.HasCode(err, "email_taken") {
		t.Errorf("alice takes bob's verified address: %v", err)
	}
	for _, bad := range []string{"Alice <alice@example.com>", "alice", "a@b.c, d@e.f", "x@agents.test", "a\r\nBcc: x@y.z"} {
		if err := set(alice, bad); gateway.AsError(err) == nil || gateway.AsError(err).Field != "email" {
			t.Errorf("address %q: %v", bad, err)
		}
	}
	if err := set(alice, "alice@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := set(alice, "alice2@example.com"); !gateway.HasCode(err, "email_code_throttled") {
		t.Errorf("a second code within a minute: %v", err)
	}
	for i := 1; i < MaxCodeTries; i++ {
		err := h.c.Verify(ctx, alice, client.VerifyEmailRequest{Code: "not-it"})
		if !gateway.HasCode(err, "wrong_code") {
			t.Fatalf("try %d: %v", i, err)
		}
	}
	if err := h.c.Verify(ctx, alice, client.VerifyEmailRequest{Code: "not-it"}); !gateway.HasCode(err, "email_code_exhausted") {
		t.Errorf("the last try: %v", err)
	}
	if err := h.c.Verify(ctx, alice, client.VerifyEmailRequest{Code: "123456"}); !gateway.HasCode(err, "no_email_pending") {
		t.Errorf("after the tries ran out the address is no longer pending: %v", err)
	}
	a, err := h.svc.Read().EmailAccount(ctx, "alice")
	if err != nil || a.Address != "" || a.CodeHash != "" {
		t.Errorf("alice's row %+v %v", a, err)
	}
	// The code is stored hashed and bound to the person: the verify email
	// holds the only copy.
	o, err := h.svc.Read().LastOutbox(ctx, "alice")
	if err != nil || o.Kind != kindVerify || o.Address != "alice@example.com" {
		t.Fatalf("the code email %+v %v", o, err)
	}
}
