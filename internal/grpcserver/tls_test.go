package grpcserver

import (
	"context"
	"log/slog"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/internal/tlsconfig"
	"github.com/portico-gateway/portico/internal/tlsconfig/tlstest"
)

// TestTLS: with Config.TLS requiring client certificates, a client with a
// certificate from the CA is served; one without is refused at the
// handshake (UNAVAILABLE), as is a plaintext client.
func TestTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	cert, key := ca.Issue(t, "server", "bufnet")
	ccert, ckey := ca.Issue(t, "client")
	srvTLS, _, err := tlsconfig.Server(cert, key, ca.File)
	if err != nil {
		t.Fatal(err)
	}
	withCert, _ := tlsconfig.Client(ca.File, ccert, ckey, "bufnet")
	noCert, _ := tlsconfig.Client(ca.File, "", "", "bufnet")
	tests := []struct {
		name string
		opt  grpc.DialOption
		want codes.Code
	}{
		{"mtls", grpc.WithTransportCredentials(credentials.NewTLS(withCert)), codes.OK},
		{"tls without client certificate", grpc.WithTransportCredentials(credentials.NewTLS(noCert)), codes.Unavailable},
		{"plaintext", grpc.WithUserAgent("plain"), codes.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc, _ := start(t, Config{Service: "svc", Logger: slog.New(slog.DiscardHandler), TLS: srvTLS}, tt.opt)
			_, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
			if status.Code(err) != tt.want {
				t.Fatalf("Health.Check = %v, want %v", err, tt.want)
			}
		})
	}
}
