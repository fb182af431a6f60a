package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmail/agentmail/client"
)

func (s *Server) createSchedule(ctx context.Context, a args) (string, error) {
	title, err := a.required("title", "what the reminder is about")
	if err != nil {
		return "", err
	}
	when, err := a.required("event_time", "RFC 3339 like 2026-05-01T09:30:00+08:00, or 2026-05-01 09:30, or 2026-05-01")
	if err != nil {
		return "", err
	}
	body, err := a.str("body")
	if err != nil {
		return "", err
	}
	req := client.CreateScheduleRequest{Title: title, EventTime: when, Body: body}
	if a.has("remind_before_minutes") {
		n, err := a.bounded("remind_before_minutes", 0, 0, maxRemindBeforeMinutes)
		if err != nil {
			return "", err
		}
		req.RemindBeforeMinutes = n
	}
	rcpt, err := a.str("recipients")
	if err != nil {
		return "", err
	}
	req.Recipients = normalizeRecipients(rcpt)
	sc, err := s.gateway().CreateSchedule(ctx, req)
	if err != nil {
		return "", err
	}
	return "Created:\n" + RenderSchedule(*sc), nil
}

func (s *Server) listSchedules(ctx context.Context, _ args) (string, error) {
	l, err := s.gateway().ListSchedules(ctx)
	if err != nil {
		return "", err
	}
	return RenderSchedules(l), nil
}

func (s *Server) updateSchedule(ctx context.Context, a args) (string, error) {
	id, err := a.required("schedule_id", "the id from list_schedules")
	if err != nil {
		return "", err
	}
	var req client.UpdateScheduleRequest
	changed := 0
	for _, f := range []struct {
		name string
		dst  **string
		norm func(string) string
	}{
		{"title", &req.Title, strings.TrimSpace},
		{"event_time", &req.EventTime, strings.TrimSpace},
		{"body", &req.Body, nil},
		{"recipients", &req.Recipients, normalizeRecipients},
	} {
		if !a.has(f.name) {
			continue
		}
		v, err := a.str(f.name)
		if err != nil {
			return "", err
		}
		if f.norm != nil {
			v = f.norm(v)
		}
		*f.dst = &v
		changed++
	}
	if a.has("remind_before_minutes") {
		n, err := a.bounded("remind_before_minutes", 0, 0, maxRemindBeforeMinutes)
		if err != nil {
			return "", err
		}
		req.RemindBeforeMinutes = n
		changed++
	}
	if changed == 0 {
		return "", badArg("nothing to change: pass at least one of title, event_time, body, remind_before_minutes, recipients")
	}
	sc, err := s.gateway().UpdateSchedule(ctx, id, req)
	if err != nil {
		return "", err
	}
	return "Updated:\n" + RenderSchedule(*sc), nil
}

func (s *Server) deleteSchedule(ctx context.Context, a args) (string, error) {
	id, err := a.required("schedule_id", "the id from list_schedules")
	if err != nil {
		return "", err
	}
	if err := s.gateway().DeleteSchedule(ctx, id); err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleted schedule %s.\n", id), nil
}
