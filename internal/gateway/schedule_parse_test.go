package gateway

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseEventTime(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	now := time.Date(2026, 9, 2, 11, 41, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
	}{
		{"2026-09-03T10:00:00+08:00", time.Date(2026, 9, 3, 2, 0, 0, 0, time.UTC)},
		{"2026-09-03T10:00:00Z", time.Date(2026, 9, 3, 10, 0, 0, 0, time.UTC)},
		{"2026-09-03T10:00:00.5Z", time.Date(2026, 9, 3, 10, 0, 0, 5e8, time.UTC)},
		{" 2026-09-03T10:00:00Z ", time.Date(2026, 9, 3, 10, 0, 0, 0, time.UTC)},
		{"2026-09-03T10:00:00", time.Date(2026, 9, 3, 10, 0, 0, 0, shanghai)},
		{"2026-09-03T10:00", time.Date(2026, 9, 3, 10, 0, 0, 0, shanghai)},
		{"2026-09-03 10:00:30", time.Date(2026, 9, 3, 10, 0, 30, 0, shanghai)},
		{"2026-09-03 10:00", time.Date(2026, 9, 3, 10, 0, 0, 0, shanghai)},
		{"2026-09-03", time.Date(2026, 9, 3, 9, 0, 0, 0, shanghai)},
	}
	for _, c := range cases {
		got, err := ParseEventTime(c.in, now, shanghai)
		if err != nil {
			t.Errorf("ParseEventTime(%q): %v", c.in, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("ParseEventTime(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParseEventTimeRefusesNaturalLanguageWithCurrentTime(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	now := time.Date(2026, 9, 2, 11, 41, 0, 0, time.UTC)
	for _, in := range []string{"", "tomorrow 9am", "明天九点", "next friday", "2026-13-01", "2026-09-03 25:00", "1693651200", "09:00"} {
		_, err := ParseEventTime(in, now, shanghai)
		var te *EventTimeError
		if !errors.As(err, &te) {
			t.Errorf("ParseEventTime(%q) err = %v, want *EventTimeError", in, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "2026-09-02T19:41:00+08:00") || !strings.Contains(msg, "event_time") {
			t.Errorf("ParseEventTime(%q) message lacks the field or the server time: %s", in, msg)
		}
	}
}

func TestParseLooseInt(t *testing.T) {
	ok := []struct {
		in   any
		want int
	}{
		{nil, 15},
		{float64(30), 30},
		{float64(0), 0},
		{"30", 30},
		{" 30 ", 30},
		{"-5", -5},
		{json.Number("45"), 45},
		{7, 7},
		{int64(8), 8},
	}
	for _, c := range ok {
		got, err := ParseLooseInt("remind_before_minutes", c.in, 15)
		if err != nil || got != c.want {
			t.Errorf("ParseLooseInt(%#v) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []any{"", "thirty", "3.5", float64(2.5), true, []any{1}, map[string]any{}, "1e3", float64(1e12)} {
		_, err := ParseLooseInt("remind_before_minutes", in, 15)
		if err == nil || !strings.Contains(err.Error(), "remind_before_minutes") {
			t.Errorf("ParseLooseInt(%#v) err = %v, want an error naming the field", in, err)
		}
	}
}

func TestSplitRecipients(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"alice", []string{"alice"}},
		{"alice,bob", []string{"alice", "bob"}},
		{"alice，bob", []string{"alice", "bob"}},
		{" alice , bob，carol ,, ", []string{"alice", "bob", "carol"}},
		{"alice,alice，bob", []string{"alice", "bob"}},
		{"pi@/home/x.fix-leak, alice", []string{"pi@/home/x.fix-leak", "alice"}},
	}
	for _, c := range cases {
		got := SplitRecipients(c.in)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitRecipients(%q) = %#v, want %#v", c.in, got, c.want)
		}
	}
}
