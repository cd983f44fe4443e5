package gateway

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// builtInServices maps each built-in upstream to its service.
var builtInServices = map[string]string{
	"inventory": "portico.inventory.v1.InventoryService",
	"payment":   "portico.payment.v1.PaymentService",
	"order":     "portico.order.v1.OrderService",
}

// shopSet is the FileDescriptorSet of the shop's protos and their
// imports, as `buf build -o` writes it, in a file shared by the tests.
var shopSet = sync.OnceValues(func() (string, error) {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imps := f.Imports()
		for i := range imps.Len() {
			add(imps.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	add(inventoryv1.File_portico_inventory_v1_inventory_proto)
	add(paymentv1.File_portico_payment_v1_payment_proto)
	add(orderv1.File_portico_order_v1_order_proto)
	b, err := proto.Marshal(set)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "portico-shopset")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "shop.binpb")
	return p, os.WriteFile(p, b, 0o600)
})

// toDescriptors moves every built-in upstream of cfg to the descriptor
// path: services and a descriptor set, or reflection.
func toDescriptors(t testing.TB, cfg *Config, reflection bool) {
	t.Helper()
	set, err := shopSet()
	if err != nil {
		t.Fatal(err)
	}
	for i, up := range cfg.Upstreams {
		svc, ok := builtInServices[up.Name]
		if !ok {
			continue
		}
		cfg.Upstreams[i].Services = []string{svc}
		if reflection {
			cfg.Upstreams[i].Reflection = true
		} else {
			cfg.Upstreams[i].Descriptors = set
		}
	}
}

// descriptorPath is set by PORTICO_TEST_DESCRIPTORS=1 (or =reflection):
// every harness serves the built-in upstreams from descriptors, so the
// whole package's suite runs on the descriptor path.
var descriptorPath = os.Getenv("PORTICO_TEST_DESCRIPTORS")
