package identity_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/internal/callmeta"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const invAud = "portico.inventory.v1.InventoryService"

// seen is what the stub's handler saw of its caller.
type seen struct {
	p      callmeta.Principal
	claims identity.Claims
}

// serve starts an inventory stub behind the identity interceptor with v
// and returns a client conn (plain: no identity layer) and what the
// handler saw on the last call.
func serve(t *testing.T, v *identity.Verifier, clientOpts ...grpc.DialOption) (*grpc.ClientConn, *seen) {
	t.Helper()
	net := stub.NewNetwork()
	got := &seen{}
	inv := &stub.Inventory{GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		got.p, _ = callmeta.PrincipalFromIncoming(ctx)
		got.claims, _ = identity.FromContext(ctx)
		return &inventoryv1.Item{Sku: "a"}, nil
	}}
	net.Serve(t, "inv", inv, nil, grpc.ChainUnaryInterceptor(identity.UnaryServerInterceptor(v)),
		grpc.ChainStreamInterceptor(identity.StreamServerInterceptor(v)))
	cc, err := grpc.NewClient("passthrough:///inv", append([]grpc.DialOption{net.DialOption(),
		grpc.WithTransportCredentials(insecure.NewCredentials())}, clientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc, got
}

func ctx(t *testing.T, kv ...string) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(c, kv...)
}

func ring(t *testing.T) *identity.Keys {
	k, err := identity.NewKeys(identity.GenerateKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestServerRefusesUnverified: forged principal metadata is refused; the
// verified assertion wins over any subject the caller also sends.
func TestServerRefusesUnverified(t *testing.T) {
	keys := ring(t)
	v, _ := identity.NewVerifier(keys, invAud)
	m, _ := identity.NewMinter(keys)
	other, _ := identity.NewMinter(ring(t))
	good, _ := m.Mint(invAud, callmeta.Principal{Subject: "alice", Role: "customer"}, "")
	forged, _ := other.Mint(invAud, callmeta.Principal{Subject: "mallory", Role: "admin"}, "")
	forPayment, _ := m.Mint("portico.payment.v1.PaymentService", callmeta.Principal{Subject: "alice", Role: "customer"}, "")
	cc, got := serve(t, v)
	client := inventoryv1.NewInventoryServiceClient(cc)
	tests := []struct {
		name string
		md   []string
		want codes.Code
	}{
		{"nothing", nil, codes.Unauthenticated},
		{"forged subject and role", []string{callmeta.SubjectKey, "alice", callmeta.RoleKey, "admin"}, codes.Unauthenticated},
		{"assertion from another ring", []string{callmeta.IdentityKey, forged}, codes.Unauthenticated},
		{"assertion for another service", []string{callmeta.IdentityKey, forPayment}, codes.Unauthenticated},
		{"two assertions", []string{callmeta.IdentityKey, good, callmeta.IdentityKey, good}, codes.Unauthenticated},
		{"garbage", []string{callmeta.IdentityKey, "v1.k1.x.y"}, codes.Unauthenticated},
		{"valid", []string{callmeta.IdentityKey, good}, codes.OK},
		{"valid beside a forged subject", []string{callmeta.IdentityKey, good, callmeta.SubjectKey, "bob", callmeta.RoleKey, "admin"}, codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			*got = seen{}
			_, err := client.GetItem(ctx(t, tt.md...), &inventoryv1.GetItemRequest{Sku: "a"})
			if status.Code(err) != tt.want {
				t.Fatalf("GetItem() = %v, want %v", err, tt.want)
			}
			if tt.want != codes.OK {
				if got.p != (callmeta.Principal{}) {
					t.Errorf("handler ran for a refused call (saw %+v)", got.p)
				}
				return
			}
			if want := (callmeta.Principal{Subject: "alice", Role: "customer"}); got.p != want || got.claims.Principal() != want {
				t.Errorf("handler saw %+v (claims %+v), want %+v", got.p, got.claims, want)
			}
		})
	}
}

func TestHealthAndReflectionStayOpen(t *testing.T) {
	cc, _ := serve(t, nil) // no keys at all
	r, err := healthpb.NewHealthClient(cc).Check(ctx(t), &healthpb.HealthCheckRequest{})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Health.Check = %v, %v; want SERVING", r, err)
	}
	_, err = inventoryv1.NewInventoryServiceClient(cc).GetItem(ctx(t, callmeta.SubjectKey, "alice"), &inventoryv1.GetItemRequest{Sku: "a"})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("GetItem() on a service without keys = %v, want UNAUTHENTICATED", err)
	}
	if !identity.Open("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo") || identity.Open("/portico.inventory.v1.InventoryService/GetItem") {
		t.Error("Open: reflection must be open and the API closed")
	}
}

// TestClientMints: a plain Minter signs the principal the caller states;
// a service Minter calls as the service for its own verified caller.
func plain(t *testing.T) context.Context { return ctx(t) }

func TestClientMints(t *testing.T) {
	keys := ring(t)
	v, _ := identity.NewVerifier(keys, invAud)
	edge, _ := identity.NewMinter(keys)
	svc, _ := identity.NewMinter(keys, identity.WithService("order"))
	tests := []struct {
		name    string
		m       *identity.Minter
		ctx     func(t *testing.T) context.Context
		want    callmeta.Principal
		wantFor string
		code    codes.Code
	}{
		{"edge signs the stated principal", edge, func(t *testing.T) context.Context {
			return callmeta.WithPrincipal(ctx(t), callmeta.Principal{Subject: "alice", Role: "customer"})
		}, callmeta.Principal{Subject: "alice", Role: "customer"}, "", codes.OK},
		{"edge with nothing stated sends nothing", edge, plain, callmeta.Principal{}, "", codes.Unauthenticated},
		{"service for a verified customer", svc, func(t *testing.T) context.Context {
			return identity.NewContext(ctx(t), identity.Claims{Subject: "alice", Role: "customer"})
		}, callmeta.Principal{Subject: "order", Role: callmeta.RoleService}, "alice", codes.OK},
		{"service for a service keeps the customer", svc, func(t *testing.T) context.Context {
			return identity.NewContext(ctx(t), identity.Claims{Subject: "edge", Role: callmeta.RoleService, For: "bob"})
		}, callmeta.Principal{Subject: "order", Role: callmeta.RoleService}, "bob", codes.OK},
		{"service in the background", svc, plain, callmeta.Principal{Subject: "order", Role: callmeta.RoleService}, "", codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc, got := serve(t, v, grpc.WithChainUnaryInterceptor(identity.UnaryClientInterceptor(tt.m)))
			_, err := inventoryv1.NewInventoryServiceClient(cc).GetItem(tt.ctx(t), &inventoryv1.GetItemRequest{Sku: "a"})
			if status.Code(err) != tt.code {
				t.Fatalf("GetItem() = %v, want %v", err, tt.code)
			}
			if got.p != tt.want || got.claims.For != tt.wantFor {
				t.Errorf("handler saw %+v for %q, want %+v for %q", got.p, got.claims.For, tt.want, tt.wantFor)
			}
		})
	}
}

func TestOutgoingDropsPlainPrincipal(t *testing.T) {
	m, _ := identity.NewMinter(ring(t))
	c := callmeta.WithPrincipal(context.Background(), callmeta.Principal{Subject: "alice", Role: "customer"})
	c, err := m.Outgoing(c, "/"+invAud+"/GetItem")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := metadata.FromOutgoingContext(c)
	if len(md.Get(callmeta.SubjectKey)) != 0 || len(md.Get(callmeta.RoleKey)) != 0 || len(md.Get(callmeta.IdentityKey)) != 1 {
		t.Errorf("outgoing metadata = %v, want one assertion and no plain principal", md)
	}
}
