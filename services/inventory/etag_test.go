package inventory

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/resourcetag"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestUpdateItemEtag: UpdateItem with an etag changes the item only while
// the etag is current, from the request field or the if-match metadata the
// edge forwards, on both store backends; every answer carries the etag
// its own content hashes to.
func TestUpdateItemEtag(t *testing.T) {
	const stale = "stale-etag"
	tests := []struct {
		name      string
		field     string // the request's etag; "current" is the item's
		metadata  string // if-match metadata; "current" is the item's
		wantCode  codes.Code
		wantSaved bool
	}{
		{name: "unconditional", wantSaved: true},
		{name: "current field", field: "current", wantSaved: true},
		{name: "current metadata", metadata: "current", wantSaved: true},
		{name: "stale field", field: stale, wantCode: codes.FailedPrecondition},
		{name: "stale metadata", metadata: stale, wantCode: codes.FailedPrecondition},
		{name: "field wins over metadata", field: "current", metadata: stale, wantSaved: true},
		{name: "stale field, current metadata", field: stale, metadata: "current", wantCode: codes.FailedPrecondition},
	}
	backends(t, func(t *testing.T, db string) {
		f := newFixture(t, db, testItems())
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before := f.getItem(t, "keyboard-001")
				if before.GetEtag() == "" || before.GetEtag() != resourcetag.Set(cloneItem(before)).GetEtag() {
					t.Fatalf("GetItem etag = %q, want the hash of the item", before.GetEtag())
				}
				pick := func(s string) string {
					if s == "current" {
						return before.GetEtag()
					}
					return s
				}
				c := as(t, callmeta.RoleAdmin)
				if tt.metadata != "" {
					c = metadata.AppendToOutgoingContext(c, callmeta.IfMatchKey, pick(tt.metadata))
				}
				got, err := f.client.UpdateItem(c, &inventoryv1.UpdateItemRequest{
					Item:       &inventoryv1.Item{Sku: "keyboard-001", Available: before.GetAvailable() + 1},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"available"}},
					Etag:       pick(tt.field),
				})
				checkErr(t, "UpdateItem", err, tt.wantCode, map[bool]string{true: "ETAG_MISMATCH"}[tt.wantCode != codes.OK])
				after := f.getItem(t, "keyboard-001")
				if saved := after.GetAvailable() != before.GetAvailable(); saved != tt.wantSaved {
					t.Fatalf("UpdateItem saved = %v, want %v (err %v)", saved, tt.wantSaved, err)
				}
				if err != nil {
					if e := rpcerr.ErrorInfo(err); e.GetMetadata()["etag"] != before.GetEtag() {
						t.Errorf("ETAG_MISMATCH metadata etag = %q, want the current %q", e.GetMetadata()["etag"], before.GetEtag())
					}
					return
				}
				if got.GetEtag() == before.GetEtag() || got.GetEtag() != after.GetEtag() {
					t.Errorf("etag before %q, answered %q, read after %q: want a new etag, answered as read", before.GetEtag(), got.GetEtag(), after.GetEtag())
				}
			})
		}
	})
}

func cloneItem(it *inventoryv1.Item) *inventoryv1.Item {
	return &inventoryv1.Item{Sku: it.Sku, Name: it.Name, UnitPrice: it.UnitPrice, Available: it.Available,
		Reserved: it.Reserved, Sold: it.Sold, UpdateTime: it.UpdateTime}
}
