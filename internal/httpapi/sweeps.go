package httpapi

import (
	"context"
	"time"
)

// The background sweeps of a started gateway (Start): permission timeouts,
// due reminders, unsent attachments.

// Default intervals of the background sweeps (AppConfig).
const (
	DefaultSweepInterval           = 5 * time.Second
	DefaultAttachmentSweepInterval = 10 * time.Minute
)

// runSweeps runs the background sweeps of issue 3 until ctx ends:
// permission timeouts, due reminders and the turn tokens of offline agents
// every sweepEvery; unsent attachments and long-expired turn tokens every
// attachmentSweepEvery. The first round runs at once, so
// what fell due while the gateway was down is handled at start. Errors are
// logged; the next round retries.
func (s *Server) runSweeps(ctx context.Context, sweepEvery, attachmentSweepEvery time.Duration) {
	fast := time.NewTicker(sweepEvery)
	defer fast.Stop()
	slow := time.NewTicker(attachmentSweepEvery)
	defer slow.Stop()
	s.sweepOnce(ctx)
	s.sweepSlow(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-fast.C:
			s.sweepOnce(ctx)
		case <-slow.C:
			s.sweepSlow(ctx)
		}
	}
}

func (s *Server) sweepOnce(ctx context.Context) {
	if n, err := s.svc.ExpirePermissions(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("permission timeout sweep failed", "err", err)
	} else if n > 0 {
		s.log.Info("permission requests denied by timeout", "count", n)
	}
	if _, err := s.svc.SendDueReminders(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("reminder sweep failed", "err", err)
	}
	if n, err := s.svc.RevokeOfflineTurnTokens(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("offline turn token sweep failed", "err", err)
	} else if n > 0 {
		s.log.Info("turn tokens of offline agents revoked", "count", n)
	}
	s.sweepReservations(ctx) // reservations.go
}

// sweepSlow runs the sweeps of the slow ticker: unsent attachments, and
// turn tokens that expired a day ago (they can never authenticate again).
func (s *Server) sweepSlow(ctx context.Context) {
	s.sweepAttachments(ctx)
	if n, err := s.svc.SweepTurnTokens(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("turn token sweep failed", "err", err)
	} else if n > 0 {
		s.log.Info("expired turn tokens removed", "count", n)
	}
}

func (s *Server) sweepAttachments(ctx context.Context) {
	if n, err := s.svc.SweepAttachments(ctx, s.blobs); err != nil && ctx.Err() == nil {
		s.log.Error("attachment sweep failed", "err", err)
	} else if n > 0 {
		s.log.Info("unsent attachments removed", "count", n)
	}
	if _, err := s.blobs.CleanTemp(time.Now().Add(-time.Hour)); err != nil && ctx.Err() == nil {
		s.log.Error("attachment temp cleanup failed", "err", err)
	}
}
