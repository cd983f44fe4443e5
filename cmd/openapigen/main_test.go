package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	genopenapi "github.com/portico-gateway/portico/gen/openapi"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// writeSet writes the FileDescriptorSet of files and their imports, as
// buf build -o would (the test links the files; the command does not).
func writeSet(t *testing.T, files ...protoreflect.FileDescriptor) string {
	t.Helper()
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		for i := range fd.Imports().Len() {
			add(fd.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	for _, fd := range files {
		add(fd)
	}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "descriptors.binpb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunFromDescriptorSet: the services come from the descriptor set, and
// the shop's set gives the committed document byte for byte.
func TestRunFromDescriptorSet(t *testing.T) {
	set := writeSet(t, inventoryv1.File_portico_inventory_v1_inventory_proto,
		paymentv1.File_portico_payment_v1_payment_proto, orderv1.File_portico_order_v1_order_proto)
	out := filepath.Join(t.TempDir(), "openapi.json")
	if err := run("../../gen/openapi/gnostic/openapi.yaml", out, set); err != nil {
		t.Fatalf("run = %v", err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, genopenapi.JSON) {
		t.Errorf("the document from the descriptor set differs from gen/openapi/openapi.json")
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.binpb")
	if err := os.WriteFile(garbage, []byte("\xff\xff\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	noImports := filepath.Join(dir, "noimports.binpb")
	b, _ := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(orderv1.File_portico_order_v1_order_proto)}})
	if err := os.WriteFile(noImports, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, set, want string
	}{
		{"no set", "", "-descriptors is required"},
		{"not a set", garbage, "not a FileDescriptorSet"},
		{"imports missing", noImports, "built with its imports?"},
		{"a service of the document missing", writeSet(t, inventoryv1.File_portico_inventory_v1_inventory_proto), "no service OrderService with an RPC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run("../../gen/openapi/gnostic/openapi.yaml", filepath.Join(dir, "out.json"), tt.set)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%s) = %v, want an error containing %q", tt.name, err, tt.want)
			}
		})
	}
}
