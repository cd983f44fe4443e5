package inventory

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/resourcetag"
)

var stateProto = map[State]inventoryv1.Reservation_State{
	StateActive:    inventoryv1.Reservation_STATE_ACTIVE,
	StateCommitted: inventoryv1.Reservation_STATE_COMMITTED,
	StateReleased:  inventoryv1.Reservation_STATE_RELEASED,
}

func moneyProto(m Money) *typev1.Money {
	return &typev1.Money{AmountMinor: m.Minor, Currency: m.Currency}
}

func moneyFrom(m *typev1.Money) Money {
	return Money{Minor: m.GetAmountMinor(), Currency: m.GetCurrency()}
}

// itemProto is the item as the service answers it, with its etag
// (resourcetag): every answer and every etag check builds it here.
func itemProto(it Item) *inventoryv1.Item {
	return resourcetag.Set(&inventoryv1.Item{
		Sku:        it.SKU,
		Name:       it.Name,
		UnitPrice:  moneyProto(it.Price),
		Available:  it.Stock.Available,
		Reserved:   it.Stock.Reserved,
		Sold:       it.Stock.Sold,
		UpdateTime: timestamppb.New(it.UpdateTime),
	})
}

func reservationProto(r Reservation) *inventoryv1.Reservation {
	out := &inventoryv1.Reservation{
		Id:         r.ID,
		OrderId:    r.OrderID,
		State:      stateProto[r.State],
		ExpireTime: timestamppb.New(r.ExpireTime),
		CreateTime: timestamppb.New(r.CreateTime),
		UpdateTime: timestamppb.New(r.UpdateTime),
	}
	for _, l := range r.Lines {
		out.Lines = append(out.Lines, &inventoryv1.ReservedLine{
			Sku: l.SKU, Quantity: l.Quantity, UnitPrice: moneyProto(l.Price),
		})
	}
	return out
}
