package balance_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/balance"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const inventoryService = "portico.inventory.v1.InventoryService"

func TestServiceConfig(t *testing.T) {
	tests := []struct {
		policy  string
		health  bool
		service string
		want    string
	}{
		{"", false, "", `{"loadBalancingConfig":[{"round_robin":{}}]}`},
		{"round_robin", true, "", `{"healthCheckConfig":{"serviceName":""},"loadBalancingConfig":[{"round_robin":{}}]}`},
		{"least_request", true, inventoryService,
			`{"healthCheckConfig":{"serviceName":"portico.inventory.v1.InventoryService"},"loadBalancingConfig":[{"least_request_experimental":{"choiceCount":2}}]}`},
	}
	for _, tt := range tests {
		got, err := balance.ServiceConfig(tt.policy, tt.health, tt.service)
		if err != nil || got != tt.want {
			t.Errorf("ServiceConfig(%q, %v, %q) = %s, %v; want %s", tt.policy, tt.health, tt.service, got, err, tt.want)
			continue
		}
		// grpc-go parses it (an unknown policy or bad JSON fails NewClient).
		conn, err := grpc.NewClient("passthrough:///x", grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultServiceConfig(got))
		if err != nil {
			t.Errorf("grpc rejects %s: %v", got, err)
			continue
		}
		conn.Close()
	}
	if _, err := balance.ServiceConfig("random", false, ""); err == nil {
		t.Error(`ServiceConfig("random") = nil error, want one`)
	}
}

// instances serves GetItem at each address, answering with the address as
// the SKU, or with the error fail returns for it.
type instances struct {
	net  *stub.Network
	fail map[string]*atomic.Bool
	hs   map[string]*health.Server
}

func serve(t *testing.T, addrs ...string) *instances {
	in := &instances{net: stub.NewNetwork(), fail: map[string]*atomic.Bool{}, hs: map[string]*health.Server{}}
	for _, a := range addrs {
		failing := &atomic.Bool{}
		in.fail[a] = failing
		in.hs[a] = in.net.Serve(t, a, &stub.Inventory{GetItemFunc: func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
			if failing.Load() {
				return nil, status.Error(codes.Unavailable, a+" is down")
			}
			return &inventoryv1.Item{Sku: a}, nil
		}}, nil)
	}
	return in
}

func dial(t *testing.T, in *instances, r *balance.Resolver, sc string) inventoryv1.InventoryServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(r.Target(), r.DialOption(), in.net.DialOption(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(sc),
		grpc.WithUnaryInterceptor(r.UnaryClientInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return inventoryv1.NewInventoryServiceClient(conn)
}

// servedBy calls GetItem and returns which instance answered, or "".
func servedBy(c inventoryv1.InventoryServiceClient) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	item, err := c.GetItem(ctx, &inventoryv1.GetItemRequest{})
	if err != nil {
		return ""
	}
	return item.GetSku()
}

// eventually calls until the last 4*len(want) answers all came from want
// and include every address of it, within 5s.
func eventually(t *testing.T, c inventoryv1.InventoryServiceClient, want ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	var run []string
	for time.Now().Before(deadline) {
		got := servedBy(c)
		if !slices.Contains(want, got) {
			run = run[:0]
			continue
		}
		run = append(run, got)
		if len(run) > 4*len(want) {
			run = run[1:]
		}
		if len(run) == 4*len(want) && !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(run, w) }) {
			return
		}
	}
	t.Fatalf("calls never settled on %q (last run %q)", want, run)
}

func TestAddressesChangeWithoutRestart(t *testing.T) {
	in := serve(t, "10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1")
	r, err := balance.NewResolver("inventory", []string{"10.0.0.1:1", "10.0.0.2:1"})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := balance.ServiceConfig(balance.RoundRobin, false, "")
	c := dial(t, in, r, sc)
	eventually(t, c, "10.0.0.1:1", "10.0.0.2:1")

	if err := r.SetAddresses([]string{"10.0.0.2:1", "10.0.0.3:1"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, c, "10.0.0.2:1", "10.0.0.3:1")
}

func TestSetAddressesValidates(t *testing.T) {
	r, err := balance.NewResolver("inventory", []string{"10.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{nil, {""}, {"10.0.0.1:1", "10.0.0.1:1"}} {
		if err := r.SetAddresses(bad); err == nil {
			t.Errorf("SetAddresses(%q) = nil, want an error", bad)
		}
	}
	if _, err := balance.NewResolver("inventory", nil); err == nil {
		t.Error("NewResolver with no addresses = nil error, want one")
	}
}

type ejections struct{ ejected, returned atomic.Int32 }

func (e *ejections) Ejected(string, string)   { e.ejected.Add(1) }
func (e *ejections) Unejected(string, string) { e.returned.Add(1) }

func TestFailingInstanceIsEjectedAndReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := serve(t, "10.0.0.1:1", "10.0.0.2:1")
		obs := &ejections{}
		r, err := balance.NewResolver("inventory", []string{"10.0.0.1:1", "10.0.0.2:1"}, balance.WithObserver(obs),
			balance.WithEjection(balance.Ejection{ConsecutiveFailures: 3, BaseTime: 30 * time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := balance.ServiceConfig(balance.RoundRobin, false, "")
		c := dial(t, in, r, sc)
		eventually(t, c, "10.0.0.1:1", "10.0.0.2:1") // both connected

		// Round robin sends every other call to the failing instance; three
		// failures in a row eject it.
		in.fail["10.0.0.2:1"].Store(true)
		eventually(t, c, "10.0.0.1:1")
		if got := r.Addresses(); !slices.Equal(got, []string{"10.0.0.1:1"}) {
			t.Errorf("Addresses() = %q, want only the healthy one", got)
		}
		if got := obs.ejected.Load(); got != 1 {
			t.Errorf("ejections = %d, want 1", got)
		}

		in.fail["10.0.0.2:1"].Store(false) // it recovers, but stays out for 30s
		time.Sleep(30 * time.Second)
		servedBy(c) // the first call after the ejection ends puts it back
		if got := r.Addresses(); len(got) != 2 {
			t.Errorf("Addresses() after 30s = %q, want both", got)
		}
		eventually(t, c, "10.0.0.1:1", "10.0.0.2:1")
		if got := obs.returned.Load(); got != 1 {
			t.Errorf("returns = %d, want 1", got)
		}
	})
}

func TestNeverEjectsTheLastInstance(t *testing.T) {
	in := serve(t, "10.0.0.1:1", "10.0.0.2:1")
	in.fail["10.0.0.1:1"].Store(true)
	in.fail["10.0.0.2:1"].Store(true)
	r, err := balance.NewResolver("inventory", []string{"10.0.0.1:1", "10.0.0.2:1"},
		balance.WithEjection(balance.Ejection{ConsecutiveFailures: 2}))
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := balance.ServiceConfig(balance.RoundRobin, false, "")
	c := dial(t, in, r, sc)
	for range 20 {
		servedBy(c)
	}
	if got := r.Addresses(); len(got) != 1 {
		t.Errorf("Addresses() with every instance failing = %q, want exactly one left", got)
	}
}

func TestHealthCheckingAvoidsNotServing(t *testing.T) {
	in := serve(t, "10.0.0.1:1", "10.0.0.2:1")
	r, err := balance.NewResolver("inventory", []string{"10.0.0.1:1", "10.0.0.2:1"})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := balance.ServiceConfig(balance.LeastRequest, true, inventoryService)
	for _, hs := range in.hs {
		hs.SetServingStatus(inventoryService, healthpb.HealthCheckResponse_SERVING)
	}
	c := dial(t, in, r, sc)
	eventually(t, c, "10.0.0.1:1", "10.0.0.2:1")
	in.hs["10.0.0.2:1"].SetServingStatus(inventoryService, healthpb.HealthCheckResponse_NOT_SERVING)
	eventually(t, c, "10.0.0.1:1")
}
