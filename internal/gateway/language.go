package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/store"
)

// The languages a person can choose (issue 18 point 2). Texts the gateway
// writes for people follow the person's choice; agents read the seed's
// forms, which are English with the seed's own Chinese words.
const (
	LangEnglish = "en" // the default
	LangChinese = "zh"
)

// CheckLanguage answers a 400 naming field language unless lang is "en"
// or "zh".
func CheckLanguage(lang string) error {
	switch lang {
	case LangEnglish, LangChinese:
		return nil
	}
	return Invalid("language", fmt.Sprintf("language %q is not en or zh", lang), `use "en" (English) or "zh" (Chinese)`)
}

// SetLanguage stores the person's language (PATCH /api/v1/me language):
// "en" or "zh", else a 400 naming field language.
func (s *Service) SetLanguage(ctx context.Context, p *Principal, lang string) error {
	if err := CheckLanguage(lang); err != nil {
		return err
	}
	if !p.IsPerson() {
		return Forbidden("person_only", "only a person has a language setting", "")
	}
	return s.Write(ctx, func(tx *Tx) error { return tx.SetUserLanguage(ctx, p.Name, lang) })
}

// Language answers a person's language; "en" for a name that is no person.
func (s *Service) Language(ctx context.Context, name string) (string, error) {
	return personLanguage(ctx, s.Read(), name)
}

func personLanguage(ctx context.Context, q *store.Q, name string) (string, error) {
	lang, err := q.UserLanguage(ctx, name)
	if errors.Is(err, store.ErrNotFound) || (err == nil && CheckLanguage(lang) != nil) {
		return LangEnglish, nil
	}
	return lang, err
}

// readersLanguage answers the language the named people share, and
// whether they share one: English when names is empty or they differ.
func readersLanguage(ctx context.Context, q *store.Q, names []string) (string, bool, error) {
	common := ""
	for _, n := range names {
		lang, err := personLanguage(ctx, q, n)
		if err != nil {
			return "", false, err
		}
		switch {
		case common == "":
			common = lang
		case common != lang:
			return LangEnglish, false, nil
		}
	}
	if common == "" {
		return LangEnglish, false, nil
	}
	return common, true, nil
}

// checkTranslations refuses translations of a send that name a language
// other than en or zh, name one twice, or break the subject and body
// limits (400 naming field translations).
func checkTranslations(ts []client.MailTranslation) error {
	seen := map[string]bool{}
	for _, t := range ts {
		if CheckLanguage(t.Language) != nil || seen[t.Language] {
			return Invalid("translations", fmt.Sprintf("translation language %q is not en or zh, or is given twice", t.Language),
				`give at most one translation each for "en" and "zh"`)
		}
		seen[t.Language] = true
		if err := checkContent(&sendSpec{subject: t.Subject, body: t.Body}); err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Field = "translations"
			}
			return err
		}
	}
	return nil
}

// pickTranslation answers the subject and body a send stores (issue 18
// point 2): when every recipient is a person and they share a language
// that one of the translations is in, that translation's; otherwise the
// mail's own subject and body (the form agents read).
func pickTranslation(ctx context.Context, q *store.Q, recips []Party, ts []client.MailTranslation, subject, body string) (string, string, error) {
	if len(ts) == 0 || len(recips) == 0 {
		return subject, body, nil
	}
	var people []string
	for _, r := range recips {
		if r.Kind != store.KindPerson {
			return subject, body, nil
		}
		people = append(people, r.Name)
	}
	lang, shared, err := readersLanguage(ctx, q, people)
	if err != nil || !shared {
		return subject, body, err
	}
	for _, t := range ts {
		if t.Language == lang {
			if t.Subject != "" {
				subject = t.Subject
			}
			return subject, t.Body, nil
		}
	}
	return subject, body, nil
}
