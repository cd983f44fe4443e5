package resourcetag

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
)

func TestSet(t *testing.T) {
	a := Set(&inventoryv1.Item{Sku: "a", Available: 1})
	if len(a.GetEtag()) != 22 {
		t.Fatalf("Set etag = %q, want 22 characters", a.GetEtag())
	}
	stale := &inventoryv1.Item{Sku: "a", Available: 1, Etag: "whatever was there"}
	if got := Set(stale).GetEtag(); got != a.GetEtag() {
		t.Errorf("Set over an old etag = %q, want %q: the etag hashes every other field only", got, a.GetEtag())
	}
	if b := Set(&inventoryv1.Item{Sku: "a", Available: 2}); b.GetEtag() == a.GetEtag() {
		t.Errorf("two different items share etag %q", a.GetEtag())
	}
	r := &inventoryv1.Reservation{Id: "res-1"}
	if Set(r); !proto.Equal(r, &inventoryv1.Reservation{Id: "res-1"}) {
		t.Errorf("Set changed a message without an etag field: %v", r)
	}
	var nilItem *inventoryv1.Item
	_ = Set(nilItem) // no panic
}

func TestStale(t *testing.T) {
	cur := &inventoryv1.Item{Sku: "a"}
	tag := Set(proto.Clone(cur).(*inventoryv1.Item)).GetEtag()
	for _, tt := range []struct {
		want      string
		wantStale bool
	}{{"", false}, {tag, false}, {"other", true}, {`"` + tag + `"`, true}} {
		got, stale := Stale(tt.want, cur)
		if stale != tt.wantStale || stale && got != tag {
			t.Errorf("Stale(%q) = %q, %v; want %v with the current tag %q", tt.want, got, stale, tt.wantStale, tag)
		}
	}
	if cur.GetEtag() != "" {
		t.Errorf("Stale changed its argument: %v", cur)
	}
}

func TestWant(t *testing.T) {
	in := metadata.NewIncomingContext(context.Background(), metadata.Pairs(callmeta.IfMatchKey, "from-edge"))
	for _, tt := range []struct {
		ctx         context.Context
		field, want string
	}{
		{context.Background(), "", ""},
		{context.Background(), "f", "f"},
		{in, "", "from-edge"},
		{in, "f", "f"},
	} {
		if got := Want(tt.ctx, tt.field); got != tt.want {
			t.Errorf("Want(field %q) = %q, want %q", tt.field, got, tt.want)
		}
	}
}

// BenchmarkSet: a service's cost of one resource's etag.
func BenchmarkSet(b *testing.B) {
	it := &inventoryv1.Item{Sku: "keyboard-001", Name: "Mechanical Keyboard", Available: 41, Reserved: 2, Sold: 9}
	b.ReportAllocs()
	for b.Loop() {
		Set(it)
	}
}
