package order

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// lineJSON is one order line in the lines column. The price is absent until
// the stock is reserved.
type lineJSON struct {
	SKU        string `json:"sku"`
	Quantity   int32  `json:"quantity"`
	PriceMinor *int64 `json:"priceMinor,omitempty"`
	Currency   string `json:"currency,omitempty"`
}

// encodeRecord returns r's column values in the order of columns.
func encodeRecord(r *Record) ([]any, error) {
	o := r.Order
	lines := make([]lineJSON, len(o.GetLines()))
	for i, l := range o.GetLines() {
		lines[i] = lineJSON{SKU: l.GetSku(), Quantity: l.GetQuantity()}
		if p := l.GetUnitPrice(); p != nil {
			minor := p.GetAmountMinor()
			lines[i].PriceMinor, lines[i].Currency = &minor, p.GetCurrency()
		}
	}
	lj, err := json.Marshal(lines)
	if err != nil {
		return nil, fmt.Errorf("order store: encode lines: %w", err)
	}
	info := r.FailureInfo
	if info == nil {
		info = map[string]string{}
	}
	ij, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("order store: encode failure info: %w", err)
	}
	var totalMinor, totalCurrency any
	if t := o.GetTotal(); t != nil {
		totalMinor, totalCurrency = t.GetAmountMinor(), t.GetCurrency()
	}
	return []any{
		o.GetId(), o.GetCustomer(), r.IdempotencyKey, r.RequestHash, o.GetStatus().String(),
		string(lj), o.GetPaymentMethod(), totalMinor, totalCurrency, o.GetReservationId(),
		o.GetPaymentId(), o.GetFailureReason(), string(ij),
		o.GetCreateTime().AsTime().UnixNano(), o.GetUpdateTime().AsTime().UnixNano(),
	}, nil
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanRecord reads one row selected with columns.
func scanRecord(sc scanner) (*Record, error) {
	var (
		r                     Record
		o                     orderv1.Order
		status, lines, info   string
		totalMinor            sql.NullInt64
		totalCurrency         sql.NullString
		createNanos, updNanos int64
	)
	err := sc.Scan(&o.Id, &o.Customer, &r.IdempotencyKey, &r.RequestHash, &status, &lines,
		&o.PaymentMethod, &totalMinor, &totalCurrency, &o.ReservationId, &o.PaymentId,
		&o.FailureReason, &info, &createNanos, &updNanos)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("order store: scan: %w", err)
	}
	st, ok := orderv1.Order_Status_value[status]
	if !ok {
		return nil, fmt.Errorf("order store: order %s has unknown status %q", o.Id, status)
	}
	o.Status = orderv1.Order_Status(st)
	if o.Lines, err = decodeLines(lines); err != nil {
		return nil, fmt.Errorf("order store: order %s: %w", o.Id, err)
	}
	if err := json.Unmarshal([]byte(info), &r.FailureInfo); err != nil {
		return nil, fmt.Errorf("order store: order %s failure info: %w", o.Id, err)
	}
	if len(r.FailureInfo) == 0 {
		r.FailureInfo = nil
	}
	if totalMinor.Valid {
		o.Total = &typev1.Money{AmountMinor: totalMinor.Int64, Currency: totalCurrency.String}
	}
	o.CreateTime = timestamppb.New(time.Unix(0, createNanos))
	o.UpdateTime = timestamppb.New(time.Unix(0, updNanos))
	r.Order = &o
	return &r, nil
}

func decodeLines(s string) ([]*orderv1.OrderLine, error) {
	var lines []lineJSON
	if err := json.Unmarshal([]byte(s), &lines); err != nil {
		return nil, fmt.Errorf("lines: %w", err)
	}
	out := make([]*orderv1.OrderLine, len(lines))
	for i, l := range lines {
		out[i] = &orderv1.OrderLine{Sku: l.SKU, Quantity: l.Quantity}
		if l.PriceMinor != nil {
			out[i].UnitPrice = &typev1.Money{AmountMinor: *l.PriceMinor, Currency: l.Currency}
		}
	}
	return out, nil
}
