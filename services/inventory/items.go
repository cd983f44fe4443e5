package inventory

import (
	"context"
	"errors"
	"slices"
	"time"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/pagebudget"
	"github.com/portico-gateway/portico/internal/protocheck"
	"github.com/portico-gateway/portico/internal/resourcetag"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// GetItem returns one item; NOT_FOUND (ITEM_NOT_FOUND) when there is none.
func (s *Service) GetItem(ctx context.Context, req *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	if err := protocheck.Request(req); err != nil {
		return nil, err
	}
	it, err := s.store.Item(ctx, req.GetSku())
	if errors.Is(err, ErrNotFound) {
		err = itemNotFound(req.GetSku())
	}
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return itemProto(it), nil
}

// ListItems returns one page of items in SKU order, at most page_size items
// and at most pagebudget.MaxBytes. The page token carries the page's last
// SKU (pagetoken): stable while items are added, as SKUs never change or
// disappear.
func (s *Service) ListItems(ctx context.Context, req *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
	var v rpcerr.Violations
	if err := protocheck.Check(&v, req); err != nil {
		return nil, err
	}
	size := pagebudget.Size(req.GetPageSize(), defaultPage, maxPage)
	after, ok := s.pages.Decode(req.GetPageToken())
	if (!ok || after != "" && !protocheck.Valid(&inventoryv1.GetItemRequest{Sku: after})) && !v.Has("page_token") { // one answer for a token too long for its rule
		v.Add("page_token", "is not a token from a previous ListItems response")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	items, err := s.store.Items(ctx, after, size+1) // one more shows whether a next page exists
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	resp := &inventoryv1.ListItemsResponse{}
	var more bool
	if resp.Items, more = pagebudget.Fill(items, size, itemProto); more {
		resp.NextPageToken = s.pages.Encode(resp.Items[len(resp.Items)-1].GetSku())
	}
	return resp, nil
}

// CreateItem adds an item with the given available stock and nothing
// reserved or sold.
func (s *Service) CreateItem(ctx context.Context, req *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	if err := validateCreate(req); err != nil {
		return nil, err
	}
	in := req.GetItem()
	it := Item{
		SKU:        in.GetSku(),
		Name:       in.GetName(),
		Price:      moneyFrom(in.GetUnitPrice()),
		Stock:      Stock{Available: in.GetAvailable()},
		UpdateTime: time.Now(),
	}
	err := s.store.InTx(ctx, func(tx Tx) error { return tx.InsertItem(ctx, it) })
	if errors.Is(err, ErrExists) {
		err = itemExists(it.SKU)
	}
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return itemProto(it), nil
}

// UpdateItem sets the masked fields of an existing item. With an etag (the
// request's, or the if-match metadata) it changes the item only if the
// etag is still the item's: FAILED_PRECONDITION (ETAG_MISMATCH) otherwise,
// checked on the row the transaction holds.
func (s *Service) UpdateItem(ctx context.Context, req *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	paths, err := validateUpdate(req)
	if err != nil {
		return nil, err
	}
	in, want := req.GetItem(), resourcetag.Want(ctx, req.GetEtag())
	var out Item
	err = s.store.InTx(ctx, func(tx Tx) error {
		it, err := tx.Item(ctx, in.GetSku())
		if errors.Is(err, ErrNotFound) {
			return itemNotFound(in.GetSku())
		}
		if err != nil {
			return err
		}
		if tag, stale := resourcetag.Stale(want, itemProto(it)); stale {
			return etagMismatch(it.SKU, tag)
		}
		if slices.Contains(paths, maskName) {
			it.Name = in.GetName()
		}
		if slices.Contains(paths, maskUnitPrice) {
			it.Price = moneyFrom(in.GetUnitPrice())
		}
		if slices.Contains(paths, maskAvailable) {
			it.Stock.Available = in.GetAvailable()
		}
		it.UpdateTime = time.Now()
		out = it
		return tx.UpdateItem(ctx, it)
	})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return itemProto(out), nil
}
