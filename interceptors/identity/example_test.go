package identity_test

import (
	"fmt"

	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// Example mints an assertion as the edge does and checks it as the
// inventory service does; the payment service's verifier refuses it.
func Example() {
	keys, _ := identity.ParseKeys("k1 c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldC0xMjM0NTY3OA")
	edge, _ := identity.NewMinter(keys)
	tok, _ := edge.Mint("portico.inventory.v1.InventoryService",
		callmeta.Principal{Subject: "alice", Role: callmeta.RoleCustomer}, "")

	inventory, _ := identity.NewVerifier(keys, "portico.inventory.v1.InventoryService")
	c, err := inventory.Verify(tok)
	fmt.Println(c.Subject, c.Role, err)

	payment, _ := identity.NewVerifier(keys, "portico.payment.v1.PaymentService")
	_, err = payment.Verify(tok)
	fmt.Println(err)
	// Output:
	// alice customer <nil>
	// identity: assertion is for another audience
}
