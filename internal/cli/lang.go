package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmail/agentmail/client"
)

// The people's commands speak the signed-in person's language (issue 18
// point 2): the account's setting ("en", the default, or "zh"), read from
// the gateway (GET /api/v1/me) whenever a command calls it and kept in the
// config file, so that a command that fails before it reaches the gateway
// (a usage error, a gateway that is down) speaks it too. Every text of the
// CLI's own is written in English in the code; zhText (lang_zh.go) holds
// its Chinese, keyed by the English text or format.

// lang is a language the CLI writes in.
type lang string

const (
	langEN lang = "en" // the default
	langZH lang = "zh"
)

// S answers the text s in l: its Chinese from zhText when l is Chinese
// and the catalog has it, else s itself.
func (l lang) S(s string) string {
	if l == langZH {
		if t, ok := zhText[s]; ok {
			return t
		}
	}
	return s
}

// F is fmt.Sprintf with the format in l; arguments of type word are
// written in l too.
func (l lang) F(format string, args ...any) string {
	for i, a := range args {
		if w, ok := a.(word); ok {
			args = append([]any(nil), args...)
			args[i] = l.S(string(w))
		}
	}
	return fmt.Sprintf(l.S(format), args...)
}

// lang answers the language of the signed-in person: the one the gateway
// answered last in this run, else the one stored at the last run, else
// English.
func (e *Env) lang() lang {
	if e.language == "" {
		e.language = langEN
		if cfg := e.readStoredConfig(); cfg != nil && cfg.Language == string(langZH) {
			e.language = langZH
		}
	}
	return e.language
}

// outf prints format (in the person's language) with args on Stdout.
func (e *Env) outf(format string, args ...any) { fmt.Fprint(e.Stdout, e.lang().F(format, args...)) }

// outln prints the text s (in the person's language) and a line end on Stdout.
func (e *Env) outln(s string) { fmt.Fprintln(e.Stdout, e.lang().S(s)) }

// errf prints format (in the person's language) with args on Stderr.
func (e *Env) errf(format string, args ...any) { fmt.Fprint(e.Stderr, e.lang().F(format, args...)) }

// learnLanguage asks the gateway for the person's language and keeps it
// for this run and, when the stored login is the one in use, in the
// config file. A failure changes nothing: the command itself reports
// what is wrong with the gateway or the key.
func (e *Env) learnLanguage(c *client.Client, cfg *Config) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	me, err := c.Me(ctx)
	if err != nil || (me.Language != string(langEN) && me.Language != string(langZH)) {
		return
	}
	e.language = lang(me.Language)
	if stored := e.readStoredConfig(); stored != nil && stored.Token == cfg.Token && stored.Language != me.Language {
		stored.Language = me.Language
		_, _ = e.saveConfig(stored)
	}
}
