package inventory

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/pagebudget"
	"github.com/portico-gateway/portico/internal/resourcetag"
)

func usd(minor int64) *typev1.Money { return &typev1.Money{AmountMinor: minor, Currency: "USD"} }

func TestGetItem(t *testing.T) {
	f := newFixture(t, "", testItems())
	tests := []struct {
		name       string
		sku        string
		want       *inventoryv1.Item
		wantCode   codes.Code
		wantReason string
		wantFields []string
	}{
		{name: "found", sku: "keyboard-001", want: resourcetag.Set(&inventoryv1.Item{
			Sku: "keyboard-001", Name: "Keyboard", UnitPrice: usd(4999), Available: 10, UpdateTime: timestamppb.New(t0),
		})},
		{name: "unknown", sku: "nope-001", wantCode: codes.NotFound, wantReason: reasonItemNotFound},
		{name: "empty sku", sku: "", wantCode: codes.InvalidArgument, wantFields: []string{"sku"}},
		{name: "upper case sku", sku: "Keyboard-001", wantCode: codes.InvalidArgument, wantFields: []string{"sku"}},
		{name: "sku too long", sku: strings.Repeat("a", 65), wantCode: codes.InvalidArgument, wantFields: []string{"sku"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.client.GetItem(ctx(t), &inventoryv1.GetItemRequest{Sku: tt.sku})
			checkErr(t, "GetItem", err, tt.wantCode, tt.wantReason)
			if d := cmp.Diff(tt.wantFields, badFields(err)); d != "" {
				t.Errorf("GetItem(%q) bad fields (-want +got):\n%s", tt.sku, d)
			}
			if d := cmp.Diff(tt.want, got, protocmp.Transform()); d != "" {
				t.Errorf("GetItem(%q) (-want +got):\n%s", tt.sku, d)
			}
		})
	}
}

// manyItems returns n items with SKUs item-000, item-001, ...
func manyItems(n int) []Item {
	out := make([]Item, n)
	for i := range out {
		out[i] = Item{SKU: fmt.Sprintf("item-%03d", i), Name: "Item", Price: Money{1, "USD"}, UpdateTime: t0}
	}
	return out
}

func TestListItemsPages(t *testing.T) {
	f := newFixture(t, "", manyItems(7))
	var got []string
	pages, token := 0, ""
	for {
		resp, err := f.client.ListItems(ctx(t), &inventoryv1.ListItemsRequest{PageSize: 3, PageToken: token})
		if err != nil {
			t.Fatalf("ListItems(page %d): %v", pages, err)
		}
		pages++
		for _, it := range resp.GetItems() {
			got = append(got, it.GetSku())
		}
		if token = resp.GetNextPageToken(); token == "" || pages > 10 {
			break
		}
	}
	want := []string{"item-000", "item-001", "item-002", "item-003", "item-004", "item-005", "item-006"}
	if d := cmp.Diff(want, got); d != "" || pages != 3 {
		t.Errorf("ListItems over %d pages (-want +got):\n%s", pages, d)
	}
}

func TestListItemsPageSize(t *testing.T) {
	f := newFixture(t, "", manyItems(120))
	tests := []struct {
		name string
		size int32
		want int
	}{
		{"zero means 50", 0, 50},
		{"explicit", 7, 7},
		{"max", 100, 100},
		{"above max is clamped", 101, 100},
		{"far above max is clamped", 1 << 30, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := f.client.ListItems(ctx(t), &inventoryv1.ListItemsRequest{PageSize: tt.size})
			if err != nil || len(resp.GetItems()) != tt.want || resp.GetNextPageToken() == "" {
				t.Errorf("ListItems(page_size %d) = %d items, token %q, %v; want %d items and a token",
					tt.size, len(resp.GetItems()), resp.GetNextPageToken(), err, tt.want)
			}
		})
	}
}

func TestListItemsInvalid(t *testing.T) {
	f := newFixture(t, "", testItems())
	tests := []struct {
		name       string
		req        *inventoryv1.ListItemsRequest
		wantFields []string
	}{
		{"negative page size", &inventoryv1.ListItemsRequest{PageSize: -1}, []string{"page_size"}},
		{"token not base64", &inventoryv1.ListItemsRequest{PageToken: "!!!"}, []string{"page_token"}},
		{"token not a sku", &inventoryv1.ListItemsRequest{PageToken: base64.RawURLEncoding.EncodeToString([]byte("NOT A SKU"))}, []string{"page_token"}},
		{"both", &inventoryv1.ListItemsRequest{PageSize: -5, PageToken: "%"}, []string{"page_size", "page_token"}},
		// A client cannot craft a token: the bare base64 of a real SKU was
		// accepted before tokens were signed.
		{"crafted token", &inventoryv1.ListItemsRequest{PageToken: base64.RawURLEncoding.EncodeToString([]byte("gone-001"))}, []string{"page_token"}},
		// Only the canonical encoding of "gone-001" ("Z29uZS0wMDE"): the
		// standard decoder lets a newline and stray padding bits through.
		{"token with a newline", &inventoryv1.ListItemsRequest{PageToken: "Z29uZS\n0wMDE"}, []string{"page_token"}},
		{"token with stray bits", &inventoryv1.ListItemsRequest{PageToken: "Z29uZS0wMDF"}, []string{"page_token"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.client.ListItems(ctx(t), tt.req)
			checkErr(t, "ListItems", err, codes.InvalidArgument, "")
			if d := cmp.Diff(tt.wantFields, badFields(err)); d != "" {
				t.Errorf("ListItems(%v) bad fields (-want +got):\n%s", tt.req, d)
			}
		})
	}
}

func TestCreateItem(t *testing.T) {
	valid := func() *inventoryv1.Item {
		return &inventoryv1.Item{Sku: "new-001", Name: "New", UnitPrice: usd(0), Available: 3, Reserved: 9, Sold: 9}
	}
	with := func(edit func(*inventoryv1.Item)) *inventoryv1.Item { it := valid(); edit(it); return it }
	tests := []struct {
		name       string
		ctx        func(t *testing.T) context.Context
		item       *inventoryv1.Item
		wantCode   codes.Code
		wantReason string
		wantFields []string
	}{
		{name: "internal call", item: valid()},
		{name: "admin", ctx: func(t *testing.T) context.Context { return as(t, callmeta.RoleAdmin) }, item: valid()},
		{name: "200 character name", item: with(func(it *inventoryv1.Item) { it.Name = strings.Repeat("é", 200) })},
		{name: "price at the cap", item: with(func(it *inventoryv1.Item) { it.UnitPrice.AmountMinor = MaxUnitPriceMinor })},
		{name: "stock at the cap", item: with(func(it *inventoryv1.Item) { it.Available = MaxAvailable })},
		{name: "price above the cap", item: with(func(it *inventoryv1.Item) { it.UnitPrice.AmountMinor = MaxUnitPriceMinor + 1 }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.unit_price"}},
		{name: "max int64 price", item: with(func(it *inventoryv1.Item) { it.UnitPrice.AmountMinor = math.MaxInt64 }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.unit_price", "item.unit_price.amount_minor"}},
		{name: "stock above the cap", item: with(func(it *inventoryv1.Item) { it.Available = MaxAvailable + 1 }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.available"}},
		{name: "max int64 stock", item: with(func(it *inventoryv1.Item) { it.Available = math.MaxInt64 }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.available"}},
		{name: "customer", ctx: func(t *testing.T) context.Context { return as(t, callmeta.RoleCustomer) }, item: valid(),
			wantCode: codes.PermissionDenied, wantReason: reasonAdminRequired},
		{name: "reader", ctx: func(t *testing.T) context.Context { return as(t, callmeta.RoleReader) }, item: valid(),
			wantCode: codes.PermissionDenied, wantReason: reasonAdminRequired},
		{name: "exists", item: with(func(it *inventoryv1.Item) { it.Sku = "keyboard-001" }),
			wantCode: codes.AlreadyExists, wantReason: reasonItemAlreadyExists},
		{name: "no item", wantCode: codes.InvalidArgument, wantFields: []string{"item"}},
		{name: "no price", item: with(func(it *inventoryv1.Item) { it.UnitPrice = nil }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.unit_price"}},
		{name: "name too long", item: with(func(it *inventoryv1.Item) { it.Name = strings.Repeat("n", 201) }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.name"}},
		{name: "500 KB name", item: with(func(it *inventoryv1.Item) { it.Name = strings.Repeat("n", 500_000) }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.name"}},
		{name: "sku bad character", item: with(func(it *inventoryv1.Item) { it.Sku = "new_001" }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.sku"}},
		{name: "lower case currency", item: with(func(it *inventoryv1.Item) { it.UnitPrice.Currency = "usd" }),
			wantCode: codes.InvalidArgument, wantFields: []string{"item.unit_price.currency"}},
		{name: "every field bad", item: &inventoryv1.Item{Sku: "", Name: "", UnitPrice: &typev1.Money{AmountMinor: -1, Currency: "US"}, Available: -1},
			wantCode: codes.InvalidArgument, wantFields: []string{
				"item.sku", "item.name", "item.unit_price.amount_minor", "item.unit_price.currency", "item.available"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, "", testItems())
				c := ctx(t)
				if tt.ctx != nil {
					c = tt.ctx(t)
				}
				got, err := f.client.CreateItem(c, &inventoryv1.CreateItemRequest{Item: tt.item})
				checkErr(t, "CreateItem", err, tt.wantCode, tt.wantReason)
				if d := cmp.Diff(tt.wantFields, badFields(err)); d != "" {
					t.Errorf("CreateItem bad fields (-want +got):\n%s", d)
				}
				if err != nil {
					stored, getErr := f.client.GetItem(ctx(t), &inventoryv1.GetItemRequest{Sku: tt.item.GetSku()})
					if tt.wantCode == codes.AlreadyExists && stored.GetName() != "Keyboard" {
						t.Errorf("after CreateItem of a taken SKU, GetItem = %v, %v; want the old item", stored, getErr)
					}
					if tt.wantCode != codes.AlreadyExists && getErr == nil {
						t.Errorf("after failed CreateItem, GetItem = %v; want nothing written", stored)
					}
					return
				}
				want := resourcetag.Set(&inventoryv1.Item{Sku: tt.item.Sku, Name: tt.item.Name, UnitPrice: tt.item.UnitPrice,
					Available: tt.item.Available, UpdateTime: timestamppb.New(t0)})
				if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
					t.Errorf("CreateItem (-want +got):\n%s", d)
				}
				if d := cmp.Diff(want, f.getItem(t, tt.item.Sku), protocmp.Transform()); d != "" {
					t.Errorf("GetItem after CreateItem (-want +got):\n%s", d)
				}
			})
		})
	}
}

func TestUpdateItem(t *testing.T) {
	base := &inventoryv1.Item{Sku: "keyboard-001", Name: "Keyboard", UnitPrice: usd(4999), Available: 10}
	tests := []struct {
		name       string
		role       string
		item       *inventoryv1.Item
		paths      []string
		want       *inventoryv1.Item // stored afterwards; nil means unchanged
		wantCode   codes.Code
		wantReason string
		wantFields []string
	}{
		{name: "name only ignores other fields", paths: []string{"name"},
			item: &inventoryv1.Item{Sku: "keyboard-001", Name: "Renamed", Available: -5},
			want: &inventoryv1.Item{Sku: "keyboard-001", Name: "Renamed", UnitPrice: usd(4999), Available: 10}},
		{name: "restock", paths: []string{"available"},
			item: &inventoryv1.Item{Sku: "keyboard-001", Available: 40},
			want: &inventoryv1.Item{Sku: "keyboard-001", Name: "Keyboard", UnitPrice: usd(4999), Available: 40}},
		{name: "price", paths: []string{"unit_price"}, role: callmeta.RoleAdmin,
			item: &inventoryv1.Item{Sku: "keyboard-001", UnitPrice: &typev1.Money{AmountMinor: 1, Currency: "EUR"}},
			want: &inventoryv1.Item{Sku: "keyboard-001", Name: "Keyboard", UnitPrice: &typev1.Money{AmountMinor: 1, Currency: "EUR"}, Available: 10}},
		{name: "price by its leaves, as a REST PATCH sends it", paths: []string{"unit_price.amount_minor", "unit_price.currency"},
			item: &inventoryv1.Item{Sku: "keyboard-001", UnitPrice: &typev1.Money{AmountMinor: 7, Currency: "EUR"}},
			want: &inventoryv1.Item{Sku: "keyboard-001", Name: "Keyboard", UnitPrice: &typev1.Money{AmountMinor: 7, Currency: "EUR"}, Available: 10}},
		{name: "half a price is refused", paths: []string{"unit_price.currency"},
			item:     &inventoryv1.Item{Sku: "keyboard-001", UnitPrice: &typev1.Money{Currency: "USD"}},
			wantCode: codes.InvalidArgument, wantFields: []string{"update_mask"}},
		{name: "no such price field", paths: []string{"unit_price.amount_minor", "unit_price.currency", "unit_price.bogus"},
			item:     &inventoryv1.Item{Sku: "keyboard-001", UnitPrice: usd(5)},
			wantCode: codes.InvalidArgument, wantFields: []string{"update_mask.paths[2]"}},
		{name: "price by its JSON name", paths: []string{"unitPrice"},
			item: &inventoryv1.Item{Sku: "keyboard-001", UnitPrice: &typev1.Money{AmountMinor: 8, Currency: "EUR"}},
			want: &inventoryv1.Item{Sku: "keyboard-001", Name: "Keyboard", UnitPrice: &typev1.Money{AmountMinor: 8, Currency: "EUR"}, Available: 10}},
		{name: "empty mask sets all three",
			item: &inventoryv1.Item{Sku: "keyboard-001", Name: "K2", UnitPrice: usd(5), Available: 0, Sold: 99},
			want: &inventoryv1.Item{Sku: "keyboard-001", Name: "K2", UnitPrice: usd(5), Available: 0}},
		{name: "empty mask validates all three", item: &inventoryv1.Item{Sku: "keyboard-001"},
			wantCode: codes.InvalidArgument, wantFields: []string{"item.name", "item.unit_price"}},
		{name: "unknown and output-only paths", paths: []string{"name", "sold", "colour"}, item: &inventoryv1.Item{Sku: "keyboard-001", Name: "x"},
			wantCode: codes.InvalidArgument, wantFields: []string{"update_mask.paths[1]", "update_mask.paths[2]"}},
		{name: "bad path and bad field", paths: []string{"sku", "available"}, item: &inventoryv1.Item{Sku: "keyboard-001", Available: -1},
			wantCode: codes.InvalidArgument, wantFields: []string{"item.available", "update_mask.paths[0]"}},
		{name: "no item", paths: []string{"name"}, wantCode: codes.InvalidArgument, wantFields: []string{"item"}},
		{name: "restock above the cap", paths: []string{"available"}, item: &inventoryv1.Item{Sku: "keyboard-001", Available: MaxAvailable + 1},
			wantCode: codes.InvalidArgument, wantFields: []string{"item.available"}},
		{name: "price above the cap", paths: []string{"unit_price"}, item: &inventoryv1.Item{Sku: "keyboard-001", UnitPrice: usd(math.MaxInt64)},
			wantCode: codes.InvalidArgument, wantFields: []string{"item.unit_price", "item.unit_price.amount_minor"}},
		// A mask is bounded by its rules before any path is echoed: the
		// answer stays small however much the mask holds.
		{name: "a path of almost 1 MiB", paths: []string{strings.Repeat("n", 1<<20-100)}, item: &inventoryv1.Item{Sku: "keyboard-001", Name: "x", UnitPrice: usd(100)},
			wantCode: codes.InvalidArgument, wantFields: []string{"update_mask"}},
		{name: "17 paths", paths: slices.Repeat([]string{"name"}, 17), item: &inventoryv1.Item{Sku: "keyboard-001", Name: "x", UnitPrice: usd(100)},
			wantCode: codes.InvalidArgument, wantFields: []string{"update_mask"}},
		{name: "a 65 character path", paths: []string{strings.Repeat("n", 65)}, item: &inventoryv1.Item{Sku: "keyboard-001", Name: "x", UnitPrice: usd(100)},
			wantCode: codes.InvalidArgument, wantFields: []string{"update_mask"}},
		{name: "unknown sku", paths: []string{"name"}, item: &inventoryv1.Item{Sku: "nope-001", Name: "x"},
			wantCode: codes.NotFound, wantReason: reasonItemNotFound},
		{name: "customer", role: callmeta.RoleCustomer, paths: []string{"name"}, item: &inventoryv1.Item{Sku: "keyboard-001", Name: "x"},
			wantCode: codes.PermissionDenied, wantReason: reasonAdminRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, "", testItems())
				time.Sleep(1)
				c := ctx(t)
				if tt.role != "" {
					c = as(t, tt.role)
				}
				var mask *fieldmaskpb.FieldMask
				if tt.paths != nil {
					mask = &fieldmaskpb.FieldMask{Paths: tt.paths}
				}
				got, err := f.client.UpdateItem(c, &inventoryv1.UpdateItemRequest{Item: tt.item, UpdateMask: mask})
				checkErr(t, "UpdateItem", err, tt.wantCode, tt.wantReason)
				if d := cmp.Diff(tt.wantFields, badFields(err)); d != "" {
					t.Errorf("UpdateItem bad fields (-want +got):\n%.2000s", d)
				}
				if n := proto.Size(status.Convert(err).Proto()); n > 2048 {
					t.Errorf("UpdateItem answer is %d bytes; want at most 2 KiB, nothing of the request repeated whole", n)
				}
				want, stamp := tt.want, t0.Add(1)
				if want == nil {
					want, stamp = base, t0
				}
				stored := f.getItem(t, "keyboard-001")
				opt := protocmp.IgnoreFields(&inventoryv1.Item{}, "update_time", "etag")
				if d := cmp.Diff(want, stored, protocmp.Transform(), opt); d != "" {
					t.Errorf("stored item after UpdateItem (-want +got):\n%s", d)
				}
				if !stored.GetUpdateTime().AsTime().Equal(stamp) {
					t.Errorf("update_time = %v, want %v", stored.GetUpdateTime().AsTime(), stamp)
				}
				if err == nil && !cmp.Equal(got, stored, protocmp.Transform()) {
					t.Errorf("UpdateItem returned %v, stored %v", got, stored)
				}
			})
		})
	}
}

// TestItemSKUsSorted guards the page token's assumption: SKU order is byte
// order.
func TestItemSKUsSorted(t *testing.T) {
	f := newFixture(t, "", append(testItems(), manyItems(3)...))
	resp, err := f.client.ListItems(ctx(t), &inventoryv1.ListItemsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var skus []string
	for _, it := range resp.GetItems() {
		skus = append(skus, it.GetSku())
	}
	if !slices.IsSorted(skus) || len(skus) != 6 {
		t.Errorf("ListItems SKUs = %v, want 6 in order", skus)
	}
}

// TestListItemsByteBudget: items stored with names longer than the rules
// allow (stored before they were bounded) still list in pages within
// pagebudget.MaxBytes, and the page tokens walk every item once.
func TestListItemsByteBudget(t *testing.T) {
	items := manyItems(60)
	for i := range items {
		items[i].Name = strings.Repeat("n", 100_000)
	}
	f := newFixture(t, "", items)
	seen := map[string]bool{}
	token := ""
	for pages := 0; ; pages++ {
		if pages > len(items) {
			t.Fatal("more pages than items")
		}
		resp, err := f.client.ListItems(ctx(t), &inventoryv1.ListItemsRequest{PageToken: token})
		if err != nil {
			t.Fatalf("ListItems(page %d) = %v, want a page", pages, err)
		}
		if n := proto.Size(resp); n > pagebudget.MaxBytes {
			t.Errorf("page %d encodes to %d bytes, want at most %d", pages, n, pagebudget.MaxBytes)
		}
		for _, it := range resp.GetItems() {
			if seen[it.GetSku()] {
				t.Errorf("item %s listed twice", it.GetSku())
			}
			seen[it.GetSku()] = true
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	if len(seen) != len(items) {
		t.Errorf("listed %d items, want %d", len(seen), len(items))
	}
}
