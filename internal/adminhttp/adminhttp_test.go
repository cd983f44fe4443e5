package adminhttp

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
)

func TestEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "portico_test_total", Help: "t"}))
	var ready atomic.Bool
	s, err := New(Config{Gatherer: reg, Ready: func(context.Context) bool { return ready.Load() }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, path string) (int, string) {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code, rec.Body.String()
	}
	tests := []struct {
		name         string
		ready        bool
		method, path string
		status       int
		body         string
	}{
		{"metrics", false, "GET", "/metrics", 200, "portico_test_total 0"},
		{"live while not ready", false, "GET", "/healthz/live", 200, `"UP"`},
		{"not ready", false, "GET", "/healthz/ready", 503, `"DOWN"`},
		{"ready", true, "GET", "/healthz/ready", 200, `"UP"`},
		{"no POST", true, "POST", "/metrics", 405, ""},
		{"unknown path", true, "GET", "/debug/pprof/", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ready.Store(tc.ready)
			code, body := get(tc.method, tc.path)
			if code != tc.status || !strings.Contains(body, tc.body) {
				t.Errorf("%s %s = %d %q, want %d containing %q", tc.method, tc.path, code, body, tc.status, tc.body)
			}
		})
	}
}

func TestServeStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, err := New(Config{Gatherer: prometheus.NewRegistry(), Ready: func(context.Context) bool { return true }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, lis) }()
	resp, err := http.Get("http://" + lis.Addr().String() + "/healthz/live")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v after its context ended, want nil", err)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New(Config{}) = nil error")
	}
}
