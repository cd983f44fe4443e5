package apidoc

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// shipping returns the document Generate makes of examples/shipping's
// descriptor set, as `buf build` wrote it or, without source info, as
// server reflection gives it.
func shipping(t *testing.T, sourceInfo bool) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../../examples/shipping/shipping.binpb")
	if err != nil {
		t.Fatal(err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	if err := proto.Unmarshal(raw, set); err != nil {
		t.Fatal(err)
	}
	for _, f := range set.GetFile() {
		if !sourceInfo {
			f.SourceCodeInfo = nil
		}
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Generate(files, []string{"acme/shipping/v1/shipping.proto"}, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestBindings: the document says what the edge does with each binding
// of a loaded service: a response_body answer is described by that
// field's schema (an array for ListShipments, the whole response's
// schema gone), the main binding keeps the plain operationId and an
// additional one adds its path's words, every binding is tagged by its
// service, and without comments (reflection) every operation still has a
// summary and no description starts with a blank line.
func TestBindings(t *testing.T) {
	for _, sourceInfo := range []bool{true, false} {
		doc := shipping(t, sourceInfo)
		list := at(doc, "paths", "/api/shipments", "get", "responses", "200", "content", "application/json", "schema")
		if at(list, "type") != "array" || at(list, "items", "$ref") != "#/components/schemas/Shipment" {
			t.Errorf("GET /api/shipments answers %v, want an array of Shipment (response_body: shipments)", list)
		}
		for _, name := range []string{"ListShipmentsResponse", "ShipmentsPage"} {
			if at(doc, "components", "schemas", name) != nil {
				t.Errorf("schema %s is still in the document, and nothing answers it", name)
			}
		}
		for _, tt := range []struct{ path, id string }{
			{"/api/shipments/{id}", "getShipment"},
			{"/api/orders/{orderId}/shipment", "getShipmentApiOrdersOrderIdShipment"},
		} {
			op := at(doc, "paths", tt.path, "get")
			if at(op, "operationId") != tt.id || at(op, "tags", "0") != "ShippingService" {
				t.Errorf("GET %s: operationId %v tags %v, want %s tagged ShippingService", tt.path, at(op, "operationId"), at(op, "tags"), tt.id)
			}
		}
		for p, item := range doc["paths"].(map[string]any) {
			if !strings.Contains(p, "shipment") {
				continue // the edge's own operations (stream tickets)
			}
			for m, op := range item.(map[string]any) {
				desc, _ := at(op, "description").(string)
				if at(op, "summary") == "" || at(op, "summary") == nil {
					t.Errorf("%s %s (source info %v): no summary", m, p, sourceInfo)
				}
				if strings.HasPrefix(desc, "\n") || (sourceInfo && !strings.Contains(desc, "\n\nRoles (built-in policy;")) {
					t.Errorf("%s %s (source info %v): description %q", m, p, sourceInfo, desc)
				}
			}
		}
	}
}
