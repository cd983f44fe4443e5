package apidoc

import "strings"

// Tag is one REST resource of the document: the operations whose path
// starts with Prefix carry its Name. The document's tags are these, not
// the gRPC services that implement them, so a generated client groups
// its calls the way a REST caller sees the API.
type Tag struct {
	Name, Prefix, Description string
}

// Tags are the document's resources, in the order the document lists them.
var Tags = []Tag{
	{"Orders", "/api/orders", "Place, read and cancel orders. A customer sees only their own orders; admin and reader see every customer's. Creating one reserves the stock, charges the payment method and commits the reservation, or fails without holding anything."},
	{"Inventory", "/api/inventory", "The catalogue and its stock. Anyone with a token may read it; only admin may add or change items."},
	{"Reservations", "/api/reservations", "Stock held for an order (admin): reserve, then either commit (reserved stock becomes sold) or release (it becomes available again). The order service does this itself for every order."},
	{"Payments", "/api/payments", "Charges and refunds (admin). Payment methods are test methods: pm_card_ok captures, pm_card_declined and pm_card_insufficient_funds decline."},
}

// tagOf is the name of the Tag whose Prefix path starts with.
func tagOf(path string) string {
	for _, t := range Tags {
		if path == t.Prefix || strings.HasPrefix(path, t.Prefix+"/") || strings.HasPrefix(path, t.Prefix+":") {
			return t.Name
		}
	}
	return ""
}
