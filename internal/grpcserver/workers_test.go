package grpcserver

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"go.uber.org/goleak"
)

// TestServeStopsServerOnEveryReturn: the stream workers New starts end
// whichever way Serve or ListenAndServe returns, also when it never
// serves.
func TestServeStopsServerOnEveryReturn(t *testing.T) {
	tests := []struct {
		name  string
		serve func(s *Server) error
	}{
		{"listen fails", func(s *Server) error {
			return s.ListenAndServe(context.Background(), "127.0.0.1:-1", nil)
		}},
		{"listener already closed", func(s *Server) error {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			lis.Close()
			return s.Serve(context.Background(), lis)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			s, err := New(Config{Service: "svc", Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.serve(s); err == nil {
				t.Fatal("serve = nil error, want one")
			}
		})
	}
}
