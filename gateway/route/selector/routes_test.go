package selector_test

import (
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/portico-gateway/portico/gateway/route"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// tableRoutes are the gateway's built-in routes and those of a loaded
// service, odd.v1.OddService, declaring what a loaded proto may: templates
// outside /api, a custom method, a literal "**", an anonymous wildcard.
func tableRoutes(tb testing.TB) []*route.Route {
	tb.Helper()
	var all []*route.Route
	for _, fd := range []protoreflect.FileDescriptor{
		inventoryv1.File_portico_inventory_v1_inventory_proto,
		paymentv1.File_portico_payment_v1_payment_proto,
		orderv1.File_portico_order_v1_order_proto,
		oddFile(tb),
	} {
		sd := fd.Services().Get(0)
		rs, err := route.FromService(sd, string(sd.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, rs...)
	}
	if _, err := route.NewTable(all); err != nil {
		tb.Fatal(err)
	}
	return all
}

// oddFile builds odd.v1.OddService as a descriptor set would load it.
func oddFile(tb testing.TB) protoreflect.FileDescriptor {
	tb.Helper()
	rule := func(method string, r *annotations.HttpRule) *descriptorpb.MethodDescriptorProto {
		opts := &descriptorpb.MethodOptions{}
		proto.SetExtension(opts, annotations.E_Http, r)
		return &descriptorpb.MethodDescriptorProto{Name: proto.String(method),
			InputType: proto.String(".odd.v1.Req"), OutputType: proto.String(".odd.v1.Req"), Options: opts}
	}
	get := func(p string) *annotations.HttpRule {
		return &annotations.HttpRule{Pattern: &annotations.HttpRule_Get{Get: p}}
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("odd/v1/odd.proto"),
		Package:     proto.String("odd.v1"),
		Dependency:  []string{"google/api/annotations.proto"},
		Syntax:      proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Req")}},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("OddService"), Method: []*descriptorpb.MethodDescriptorProto{
			rule("ListThings", get("/v1/things")),
			rule("ListHives", get("/apiary/hives")),
			rule("SearchThings", &annotations.HttpRule{Pattern: &annotations.HttpRule_Custom{Custom: &annotations.CustomHttpPattern{Kind: "search", Path: "/api/things"}}}),
			rule("GetFiles", get("/api/files/**")),
			rule("Wild", &annotations.HttpRule{Pattern: &annotations.HttpRule_Post{Post: "/api/wild/*"}, Body: "*"}),
		}}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		tb.Fatal(err)
	}
	return fd
}
