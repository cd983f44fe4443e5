package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/testproc"
)

// signed is the dial option of a client calling with a valid identity
// under the package's shared keys, which every process the tests start
// inherits ($PORTICO_IDENTITY_KEYS_FILE, set by shareIdentityKeys); a
// cluster started with its own --identity-keys signs with its minter.
var signed grpc.DialOption

// asService mints for a test client calling as a service of its own
// (interceptors.WithIdentity), under the shared keys.
var asService *identity.Minter

// shareIdentityKeys writes identity keys for the whole package under dir,
// names them in the environment every process started inherits, and sets
// signed.
func shareIdentityKeys(dir string) error {
	keys, err := identity.NewKeys(identity.GenerateKey("e2e-shared"))
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "identity.keys")
	if err := os.WriteFile(path, []byte(keys.String()), 0o600); err != nil {
		return err
	}
	m, err := identity.NewMinter(keys)
	if err != nil {
		return err
	}
	signed = grpc.WithChainUnaryInterceptor(identity.UnaryClientInterceptor(m))
	if asService, err = identity.NewMinter(keys, identity.WithService("e2e")); err != nil {
		return err
	}
	return os.Setenv(identity.EnvKeysFile, path)
}

// directCalls is one call to each service, made on a connection.
func directCalls() []struct {
	name string
	addr func(*cluster) string
	call func(context.Context, *grpc.ClientConn) error
} {
	return []struct {
		name string
		addr func(*cluster) string
		call func(context.Context, *grpc.ClientConn) error
	}{
		{"inventory", func(c *cluster) string { return c.invAddr }, func(ctx context.Context, cc *grpc.ClientConn) error {
			_, err := inventoryv1.NewInventoryServiceClient(cc).GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "keyboard-001"})
			return err
		}},
		{"payment", func(c *cluster) string { return c.payAddr }, func(ctx context.Context, cc *grpc.ClientConn) error {
			_, err := paymentv1.NewPaymentServiceClient(cc).ListPayments(ctx, &paymentv1.ListPaymentsRequest{OrderId: "ord-1"})
			return err
		}},
		{"order", func(c *cluster) string { return c.orderAddr }, func(ctx context.Context, cc *grpc.ClientConn) error {
			_, err := orderv1.NewOrderServiceClient(cc).CreateOrder(ctx, orderReq("keyboard-001", 1, "pm_card_ok"))
			return err
		}},
	}
}

// TestDirectCallsNeedIdentity: a direct gRPC call to each service with
// forged principal metadata and no valid identity is UNAUTHENTICATED (an
// assertion from other keys too); the same call signed with the cluster's
// keys works; health stays open without one.
func TestDirectCallsNeedIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	otherKeys, _ := identity.NewKeys(identity.GenerateKey("e2e"))
	other, _ := identity.NewMinter(otherKeys)
	for i, dc := range directCalls() {
		t.Run(dc.name, func(t *testing.T) {
			addr := dc.addr(c)
			plain := testproc.Dial(t, addr)
			forgedBy := testproc.Dial(t, addr, grpc.WithChainUnaryInterceptor(identity.UnaryClientInterceptor(other)))
			signed := testproc.Dial(t, addr, grpc.WithChainUnaryInterceptor(identity.UnaryClientInterceptor(c.minter)))
			key := "direct-" + itoa(i)
			if err := dc.call(as(t, "alice", "customer", key), plain); status.Code(err) != codes.Unauthenticated {
				t.Errorf("forged metadata = %v, want UNAUTHENTICATED", err)
			}
			if err := dc.call(as(t, "alice", "customer", key), forgedBy); status.Code(err) != codes.Unauthenticated {
				t.Errorf("assertion from other keys = %v, want UNAUTHENTICATED", err)
			}
			role := "customer"
			if dc.name == "payment" {
				role = "reader" // payments are read by readers and admins (a customer reads its order)
			}
			if err := dc.call(as(t, "alice", role, key), signed); err != nil {
				t.Errorf("signed call = %v, want success", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if _, err := healthpb.NewHealthClient(plain).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
				t.Errorf("health without identity = %v, want an answer", err)
			}
		})
	}
}

// TestOwnershipOverDirectCalls: ownership stays in the order service: with
// valid identities, another customer's order is NOT_FOUND, its owner and an
// admin see it; and an assertion minted for another service is refused.
func TestOwnershipOverDirectCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	o, err := c.Order.CreateOrder(as(t, "alice", "customer", "own-1"), orderReq("keyboard-001", 1, "pm_card_ok"))
	if err != nil {
		t.Fatalf("CreateOrder as alice: %v", err)
	}
	get := &orderv1.GetOrderRequest{Id: o.GetId()}
	for _, tt := range []struct {
		subject, role string
		want          codes.Code
	}{
		{"alice", "customer", codes.OK},
		{"bob", "customer", codes.NotFound},
		{"course-admin", "admin", codes.OK},
	} {
		if _, err := c.Order.GetOrder(as(t, tt.subject, tt.role, ""), get); status.Code(err) != tt.want {
			t.Errorf("GetOrder as %s = %v, want %v", tt.subject, err, tt.want)
		}
	}
	tok, _ := c.minter.Mint("portico.payment.v1.PaymentService", callmeta.Principal{Subject: "alice", Role: "customer"}, "")
	ctx := metadata.AppendToOutgoingContext(t.Context(), callmeta.IdentityKey, tok)
	if _, err := orderv1.NewOrderServiceClient(testproc.Dial(t, c.orderAddr)).GetOrder(ctx, get); status.Code(err) != codes.Unauthenticated {
		t.Errorf("GetOrder with an assertion for payment = %v, want UNAUTHENTICATED", err)
	}
}

// checkDevIdentity is TestDev's check that `portico dev` gives its services
// identity by default: forged metadata is refused on every service port
// (plaintext gRPC, no handshake failure), and the run's key file is private.
func checkDevIdentity(t *testing.T, base int, dir string) {
	for off, svc := range map[int]string{1: "inventory", 2: "payment", 3: "order"} {
		cc := testproc.Dial(t, testproc.Addr(base+off))
		var err error
		ctx := as(t, "alice", "customer", "dev-forged")
		switch svc {
		case "inventory":
			_, err = inventoryv1.NewInventoryServiceClient(cc).GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "keyboard-001"})
		case "payment":
			_, err = paymentv1.NewPaymentServiceClient(cc).ListPayments(ctx, &paymentv1.ListPaymentsRequest{OrderId: "ord-1"})
		case "order":
			_, err = orderv1.NewOrderServiceClient(cc).CreateOrder(ctx, orderReq("keyboard-001", 1, "pm_card_ok"))
		}
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s with forged metadata = %v, want UNAUTHENTICATED", svc, err)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "identity.keys"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("identity.keys = %v, %v; want mode 0600", fi, err)
	}
}
