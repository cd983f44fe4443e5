package interceptors_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/tlsconfig"
	"github.com/portico-gateway/portico/internal/tlsconfig/tlstest"
)

// TestAddressListChecksHostDialled: an upstream given as an address list
// checks each instance's certificate against the host dialled (what the
// config reference promises for an empty server_name), not against the
// upstream's name, which no certificate holds.
func TestAddressListChecksHostDialled(t *testing.T) {
	ca := tlstest.NewCA(t, "up")
	scert, skey := ca.Issue(t, "instance", "127.0.0.1")
	srvTLS, _, err := tlsconfig.Server(scert, skey, "")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(srvTLS)))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	cliTLS, err := tlsconfig.Client(ca.File, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	up, err := interceptors.NewUpstream("", interceptors.WithConfig(interceptors.Config{
		Name: "inventory", Addresses: []string{ln.Addr().String()}, Timeout: 5 * time.Second,
	}), interceptors.WithDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(cliTLS))), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(up.Conn()).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("a call to an instance whose certificate names the host dialled: %v", err)
	}
}
