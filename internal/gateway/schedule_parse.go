package gateway

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultReminderHour is the hour of day (server zone) a reminder given as a
// date alone is set to (seed 001 schedules note: "only a date → 09:00 that
// day, more useful than midnight").
const DefaultReminderHour = 9

// localLayouts are the accepted forms of a local time without a zone, read
// in the server's zone. Seconds are optional; "T" or a space separate date
// and time.
var localLayouts = []string{
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
}

// EventTimeError is the error of ParseEventTime: Input is the refused text
// and Now the server's current time in its zone, which the message carries
// so that a model whose idea of "today" is wrong can compute the time itself
// (seed 001: natural language is refused on purpose).
type EventTimeError struct {
	Input string
	Now   time.Time
}

// Error names the field, the accepted forms and the server's current time.
func (e *EventTimeError) Error() string {
	return fmt.Sprintf("event_time %q is not a time I accept: use RFC 3339 (2006-01-02T15:04:05+08:00), "+
		"a local time without zone (2006-01-02 15:04, read in the server's zone %s) or a date alone "+
		"(2006-01-02, meaning %02d:00); natural language such as \"tomorrow 9am\" is not accepted. "+
		"The server's current time is %s",
		e.Input, e.Now.Location(), DefaultReminderHour, e.Now.Format(time.RFC3339))
}

// ParseEventTime reads a schedule's event_time (seed 001 schedules note):
// full RFC 3339 (with zone or Z); a local date and time without zone, read
// in loc (the server's zone); or a date alone, meaning DefaultReminderHour
// o'clock that day in loc. Surrounding white space is ignored. Anything
// else, natural language included, is an *EventTimeError carrying now (in
// loc). loc nil means time.Local.
func ParseEventTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.Local
	}
	t := strings.TrimSpace(s)
	if t != "" {
		if v, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return v, nil
		}
		for _, layout := range localLayouts {
			if v, err := time.ParseInLocation(layout, t, loc); err == nil {
				return v, nil
			}
		}
		if v, err := time.ParseInLocation("2006-01-02", t, loc); err == nil {
			return time.Date(v.Year(), v.Month(), v.Day(), DefaultReminderHour, 0, 0, 0, loc), nil
		}
	}
	return time.Time{}, &EventTimeError{Input: s, Now: now.In(loc)}
}

// ParseLooseInt reads an integer field that clients send either as a JSON
// number or as a numeric string (seed 001: `"30"` with quotes must not
// silently lose "remind 30 minutes before"). nil (field absent) gives def.
// Accepted: float64 or json.Number holding a whole number, any Go integer
// type, and strings of decimal digits with an optional sign and surrounding
// white space. Fractions, empty strings, booleans and other types are an
// error naming field.
func ParseLooseInt(field string, v any, def int) (int, error) {
	bad := func() (int, error) {
		return 0, fmt.Errorf("%s must be a whole number (a number or a numeric string such as \"30\"), got %v", field, v)
	}
	switch x := v.(type) {
	case nil:
		return def, nil
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > math.MaxInt32 {
			return bad()
		}
		return int(x), nil
	case json.Number:
		return ParseLooseInt(field, string(x), def)
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case int32:
		return int(x), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
			return bad()
		}
		return n, nil
	default:
		return bad()
	}
}

// SplitRecipients splits a schedule's recipients string on ASCII "," and
// full-width "，" commas (seed 001: a plain string works on every platform;
// Chinese input methods type "，"). Names are trimmed; empty entries and
// repeats are dropped; order is kept.
func SplitRecipients(s string) []string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '，' })
	out := make([]string, 0, len(parts))
	seen := map[string]bool{}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}
