package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/testproc"
)

// cluster is the three services as real processes on free ports.
type cluster struct {
	t                testing.TB
	dir              string
	invAddr, payAddr string
	orderAddr        string
	inv, pay, ord    *testproc.Proc
	orderExtra       []string
	invExtra         []string
	Inventory        inventoryv1.InventoryServiceClient
	Payment          paymentv1.PaymentServiceClient
	Order            orderv1.OrderServiceClient
}

func startCluster(t testing.TB, orderExtra ...string) *cluster {
	t.Helper()
	return startClusterWith(t, nil, orderExtra)
}

// startClusterWith passes extra flags to inventory and order (e.g. --faults).
func startClusterWith(t testing.TB, invExtra, orderExtra []string) *cluster {
	t.Helper()
	c := &cluster{t: t, dir: testproc.TempDir(t), orderExtra: orderExtra, invExtra: invExtra}
	c.invAddr = testproc.Addr(testproc.FreePort(t))
	c.payAddr = testproc.Addr(testproc.FreePort(t))
	c.orderAddr = testproc.Addr(testproc.FreePort(t))
	c.startInventory()
	c.startPayment()
	c.startOrder()
	c.Inventory = inventoryv1.NewInventoryServiceClient(testproc.Dial(t, c.invAddr))
	c.Payment = paymentv1.NewPaymentServiceClient(testproc.Dial(t, c.payAddr))
	c.Order = orderv1.NewOrderServiceClient(testproc.Dial(t, c.orderAddr))
	return c
}

func (c *cluster) db(name string) string { return filepath.Join(c.dir, name+".db") }

func (c *cluster) startInventory() {
	args := append([]string{"inventory", "--listen", c.invAddr, "--db", c.db("inventory")}, c.invExtra...)
	c.inv = testproc.Start(c.t, bin, "inventory", args...)
	testproc.WaitServing(c.t, c.inv, c.invAddr)
}

func (c *cluster) startPayment() {
	c.pay = testproc.Start(c.t, bin, "payment", "payment", "--listen", c.payAddr, "--db", c.db("payment"))
	testproc.WaitServing(c.t, c.pay, c.payAddr)
}

func (c *cluster) startOrder() {
	args := append([]string{"order", "--listen", c.orderAddr, "--db", c.db("order"),
		"--inventory", c.invAddr, "--payment", c.payAddr}, c.orderExtra...)
	c.ord = testproc.Start(c.t, bin, "order", args...)
	testproc.WaitServing(c.t, c.ord, c.orderAddr)
}

// as returns a context calling as subject with role, carrying an
// idempotency key when key is not empty, bounded by 10s.
func as(t testing.TB, subject, role, key string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	kv := []string{"x-portico-subject", subject, "x-portico-role", role}
	if key != "" {
		kv = append(kv, "idempotency-key", key)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func orderReq(sku string, qty int32, method string) *orderv1.CreateOrderRequest {
	return &orderv1.CreateOrderRequest{
		Lines:         []*orderv1.OrderLine{{Sku: sku, Quantity: qty}},
		PaymentMethod: method,
	}
}
