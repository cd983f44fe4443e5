package order

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/pagebudget"
	"github.com/portico-gateway/portico/internal/protocheck"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Page sizes of ListOrders.
const (
	defaultPageSize = 20  // when page_size is 0
	maxPageSize     = 100 // the largest page_size
)

// GetOrder implements orderv1.OrderServiceServer. Another customer's order
// is NOT_FOUND, exactly like a missing one, so ids leak nothing.
func (s *Service) GetOrder(ctx context.Context, req *orderv1.GetOrderRequest) (*orderv1.Order, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := s.load(ctx, p, req)
	if err != nil {
		return nil, err
	}
	return rec.order(), nil
}

// idRequest is a request naming one order by id (Get, Cancel).
type idRequest interface {
	proto.Message
	GetId() string
}

// load returns the order req names if p may see it. An id that breaks the
// request's rules is INVALID_ARGUMENT and is never echoed.
func (s *Service) load(ctx context.Context, p callmeta.Principal, req idRequest) (*Record, error) {
	if err := protocheck.Request(req); err != nil {
		return nil, err
	}
	id := req.GetId()
	rec, err := s.store.Get(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && !visible(p, rec) {
		return nil, orderNotFound(id)
	}
	if err != nil {
		return nil, s.storeErr(ctx, "get order", err, "orderId", id)
	}
	return rec, nil
}

// ListOrders implements orderv1.OrderServiceServer: newest first, the
// caller's own orders unless their role sees all, at most page_size orders
// and at most pagebudget.MaxBytes per page.
func (s *Service) ListOrders(ctx context.Context, req *orderv1.ListOrdersRequest) (*orderv1.ListOrdersResponse, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	var v rpcerr.Violations
	if err := protocheck.Check(&v, req); err != nil {
		return nil, err
	}
	size := pagebudget.Size(req.GetPageSize(), defaultPageSize, maxPageSize)
	after, ok := s.decodePageToken(req.GetPageToken())
	if !ok && !v.Has("page_token") { // one answer for a token too long for its rule
		v.Add("page_token", "malformed; pass a next_page_token unchanged")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	q := ListQuery{After: after, Limit: size + 1}
	if !p.SeesAll() {
		q.Customer = p.Subject
	}
	recs, err := s.store.List(ctx, q)
	if err != nil {
		return nil, s.storeErr(ctx, "list orders", err)
	}
	resp := &orderv1.ListOrdersResponse{}
	var more bool
	if resp.Orders, more = pagebudget.Fill(recs, size, (*Record).order); more {
		last := resp.Orders[len(resp.Orders)-1]
		resp.NextPageToken = s.encodePageToken(Cursor{CreateTime: last.GetCreateTime().AsTime(), ID: last.GetId()})
	}
	return resp, nil
}

// Page tokens carry (pagetoken) "<create time, Unix ns>/<order id>": the
// position of the last order returned. They carry no scope, which always
// comes from the caller.
func (s *Service) encodePageToken(c Cursor) string {
	return s.pages.Encode(strconv.FormatInt(c.CreateTime.UnixNano(), 10) + "/" + c.ID)
}

// decodePageToken returns the cursor in tok, nil for "", and false when tok
// is anything ListOrders could not have handed out.
func (s *Service) decodePageToken(tok string) (*Cursor, bool) {
	pos, ok := s.pages.Decode(tok)
	if !ok || pos == "" {
		return nil, ok
	}
	ns, id, _ := strings.Cut(pos, "/")
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != ns || !protocheck.Valid(&orderv1.GetOrderRequest{Id: id}) {
		return nil, false
	}
	return &Cursor{CreateTime: time.Unix(0, n), ID: id}, true
}
