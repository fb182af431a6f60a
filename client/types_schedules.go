package client

import "time"

// CreateScheduleRequest is the body of POST /api/v1/schedules and
// /api/v1/me/schedules. EventTime accepts RFC 3339, a local time without
// zone (server zone) or a date alone (09:00 that day); natural language is a
// 400 whose message includes the server's current time. Recipients is one
// string separated by ASCII or full-width commas; empty means the owner.
// RemindBeforeMinutes accepts a number or a numeric string.
type CreateScheduleRequest struct {
	Title               string `json:"title"`
	Body                string `json:"body,omitempty"`
	EventTime           string `json:"event_time"`
	RemindBeforeMinutes any    `json:"remind_before_minutes,omitempty"`
	Recipients          string `json:"recipients,omitempty"`
}

// UpdateScheduleRequest is the body of PATCH /api/v1/schedules/{id}: only
// the fields sent change.
type UpdateScheduleRequest struct {
	Title               *string `json:"title,omitempty"`
	Body                *string `json:"body,omitempty"`
	EventTime           *string `json:"event_time,omitempty"`
	RemindBeforeMinutes any     `json:"remind_before_minutes,omitempty"`
	Recipients          *string `json:"recipients,omitempty"`
}

// Schedule is a stored reminder. SentAt is set once the reminder mail went
// out (exactly once, even across restarts and replicas).
type Schedule struct {
	ScheduleID          string     `json:"schedule_id"`
	Owner               string     `json:"owner"`
	Title               string     `json:"title"`
	Body                string     `json:"body"`
	EventTime           time.Time  `json:"event_time"`
	RemindBeforeMinutes int        `json:"remind_before_minutes"`
	RemindAt            time.Time  `json:"remind_at"`
	Recipients          []string   `json:"recipients"`
	SentAt              *time.Time `json:"sent_at,omitempty"`
	CreatedAt           time.Time  `json:"created_at"`
}

// ScheduleList answers GET /api/v1/schedules. Hint is set when Count is at
// or above 75 % of Limit.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
	Count     int        `json:"count"`
	Limit     int        `json:"limit"`
	Hint      string     `json:"hint,omitempty"`
}
