package bench

import (
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/protoload"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// writeDescriptorSet writes the shop's FileDescriptorSet with its imports,
// as `buf build -o` would, to dir/shop.binpb and returns its path.
func writeDescriptorSet(dir string) (string, error) {
	set := protoload.SetOf(inventoryv1.File_portico_inventory_v1_inventory_proto,
		paymentv1.File_portico_payment_v1_payment_proto, orderv1.File_portico_order_v1_order_proto)
	b, err := proto.Marshal(set)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "shop.binpb")
	return p, os.WriteFile(p, b, 0o600)
}

// builtInServices names the proto service each built-in upstream serves.
var builtInServices = map[string]string{
	"inventory": inventoryv1.InventoryService_ServiceDesc.ServiceName,
	"payment":   paymentv1.PaymentService_ServiceDesc.ServiceName,
	"order":     orderv1.OrderService_ServiceDesc.ServiceName,
}

// toDescriptors moves cfg's built-in upstreams to the descriptor path
// (issue 23): their services loaded from the descriptor set at set
// instead of the compiled-in handlers.
func toDescriptors(cfg *config.Config, set string) {
	for i, up := range cfg.Upstreams {
		if svc, ok := builtInServices[up.Name]; ok {
			cfg.Upstreams[i].Services = []string{svc}
			cfg.Upstreams[i].Descriptors = set
		}
	}
}
