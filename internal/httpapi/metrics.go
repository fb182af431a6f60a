package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Prometheus metrics of one gateway process, served at GET /metrics in the
// text exposition format (issue 7 "operations"). Every replica exposes its
// own; sum them in the query. Series:
//
//	agentmail_http_requests_total{method,route,status}   counter; route is the chi pattern
//	                                                      ("/api/v1/mail/{id}"), "unmatched" or "web"
//	agentmail_http_request_duration_seconds{method,route} histogram; event streams excluded
//	agentmail_sse_clients                                 gauge: open event streams on this replica
//	agentmail_sse_events_sent_total                       counter: events written to event streams
//	agentmail_mails_sent_total{mail_type}                 counter: mails stored by this replica
//	agentmail_permission_requests_pending                 gauge: undecided requests (whole database), -1 if unknown
//
// plus the Go runtime and process collectors.

// metricsRoutes is the Prometheus endpoint.
func metricsRoutes() []Route {
	return []Route{{Method: "GET", Path: "/metrics", Auth: AuthNone,
		Summary: "Prometheus metrics of this gateway process (text exposition format)", Description: "Request counts and latencies by route and status, event-stream and mail counters of this process, in the Prometheus text exposition format (docs/OPERATIONS.md).", Status: 200,
		Errors: []int{500}, Produces: "text/plain", Handler: (*Server).handleMetrics}}
}

// metrics holds one Server's registry and series.
type metrics struct {
	reg        *prometheus.Registry
	handler    http.Handler
	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	eventsSent prometheus.Counter
	mailsSent  *prometheus.CounterVec
}

// metrics answers the Server's metrics, built on first use. The gauges read
// the hub and the database when scraped; a Server without them (route
// table tests) reports zero.
func (s *Server) metrics() *metrics {
	s.metOnce.Do(func() { s.met = s.newMetrics() })
	return s.met
}

func (s *Server) newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentmail_http_requests_total",
		Help: "HTTP requests answered, by method, route pattern and status."}, []string{"method", "route", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agentmail_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request (event streams excluded), by method and route pattern.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"method", "route"})
	m.eventsSent = prometheus.NewCounter(prometheus.CounterOpts{Name: "agentmail_sse_events_sent_total",
		Help: "Events written to event streams (replays included)."})
	m.mailsSent = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentmail_mails_sent_total",
		Help: "Mails stored through this process, by mail_type (relays, reminders and permission mails included)."}, []string{"mail_type"})
	sseClients := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agentmail_sse_clients",
		Help: "Open event streams on this process."}, func() float64 {
		if s.hub == nil {
			return 0
		}
		return float64(s.hub.Subscribers())
	})
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agentmail_permission_requests_pending",
		Help: "Permission requests waiting for a decision (the whole database); -1 when the database did not answer."}, func() float64 {
		if s.svc == nil || s.svc.Store == nil {
			return 0
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := s.svc.Read().CountPendingPermissions(ctx)
		if err != nil {
			s.log.Warn("metrics: count pending permission requests", "err", err)
			return -1
		}
		return float64(n)
	})
	storageFull := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "agentmail_storage_full",
		Help: "1 when a write found the disk full in the last minute and no mail was stored since, else 0."}, func() float64 {
		if s.storageFull() {
			return 1
		}
		return 0
	})
	m.reg.MustRegister(m.requests, m.duration, m.eventsSent, m.mailsSent, sseClients, pending, storageFull,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	if s.svc != nil {
		prev := s.svc.MailsCommitted
		s.svc.MailsCommitted = func(types []string) {
			s.storageFullAt.Store(0) // a mail was stored: there is space again
			for _, t := range types {
				m.mailsSent.WithLabelValues(t).Inc()
			}
			if prev != nil {
				prev(types)
			}
		}
	}
	return m
}

// handleMetrics serves GET /metrics.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) error {
	s.metrics().handler.ServeHTTP(w, r)
	return nil
}

// EventSent counts one event written to an event stream.
func (s *Server) EventSent() { s.metrics().eventsSent.Inc() }

// observe is the middleware that counts every request by route pattern and
// status once it is answered. It keeps the writer's Flush, which event
// streams need.
func (s *Server) observe(next http.Handler) http.Handler {
	m := s.metrics()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		} else if !strings.HasPrefix(r.URL.Path, "/api/") && s.opt.WebUI != nil {
			route = "web"
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		m.requests.WithLabelValues(r.Method, route, strconv.Itoa(status)).Inc()
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			m.duration.WithLabelValues(r.Method, route).Observe(time.Since(start).Seconds())
		}
	})
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes through, so event streams still reach the client at once.
func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
