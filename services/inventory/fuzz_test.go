package inventory

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/sqlitedb"
)

// FuzzListItemsPageToken feeds ListItems any page token: the answer is
// INVALID_ARGUMENT naming page_token, or a valid page of SKUs after the
// token's SKU; never a panic or another code.
func FuzzListItemsPageToken(f *testing.F) {
	store, err := OpenSQLite(context.Background(), sqlitedb.Memory)
	if err != nil {
		f.Fatalf("OpenSQLite: %v", err)
	}
	f.Cleanup(func() { store.Close() })
	if _, err := store.Seed(context.Background(), manyItems(7)); err != nil {
		f.Fatalf("Seed: %v", err)
	}
	svc, err := New(store)
	if err != nil {
		f.Fatalf("New: %v", err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	for _, seed := range []string{
		"", enc([]byte("item-002")), enc([]byte("item-006")), enc([]byte("zzz")), enc([]byte("NOT A SKU")),
		enc([]byte(strings.Repeat("a", 64))), enc([]byte(strings.Repeat("a", 65))), "!!!", "%", "aXRlbS0wMDI=", "aXRlbS0wMD",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		resp, err := svc.ListItems(context.Background(), &inventoryv1.ListItemsRequest{PageSize: 3, PageToken: tok})
		if err != nil {
			if status.Code(err) != codes.InvalidArgument || !slices.Equal(badFields(err), []string{"page_token"}) {
				t.Fatalf("ListItems(token %q) = %v; want INVALID_ARGUMENT naming page_token", tok, err)
			}
			return
		}
		after, ok := svc.pages.Decode(tok)
		if !ok {
			t.Fatalf("ListItems accepted token %q that pagetoken.Decode rejects", tok)
		}
		var skus []string
		for _, it := range resp.GetItems() {
			skus = append(skus, it.GetSku())
		}
		if len(skus) > 3 || !slices.IsSorted(skus) || len(skus) > 0 && skus[0] <= after {
			t.Fatalf("ListItems(token %q, after %q) = %v; want at most 3 sorted SKUs after it", tok, after, skus)
		}
		if next := resp.GetNextPageToken(); next != "" {
			if got, ok := svc.pages.Decode(next); !ok || got != skus[len(skus)-1] {
				t.Fatalf("next_page_token %q decodes to %q, %v; want %q", next, got, ok, skus[len(skus)-1])
			}
		}
	})
}
