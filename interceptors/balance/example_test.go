package balance_test

import (
	"fmt"

	"github.com/portico-gateway/portico/interceptors/balance"
)

func ExampleServiceConfig() {
	sc, err := balance.ServiceConfig("least_request", true, "portico.inventory.v1.InventoryService")
	if err != nil {
		panic(err)
	}
	fmt.Println(sc)
	// Output: {"healthCheckConfig":{"serviceName":"portico.inventory.v1.InventoryService"},"loadBalancingConfig":[{"least_request_experimental":{"choiceCount":2}}]}
}

func ExampleResolver_SetAddresses() {
	r, err := balance.NewResolver("inventory", []string{"10.0.0.7:43101", "10.0.0.8:43101"})
	if err != nil {
		panic(err)
	}
	// Dial r.Target() with r.DialOption(); then, as instances come and go:
	_ = r.SetAddresses([]string{"10.0.0.8:43101", "10.0.0.9:43101"})
	fmt.Println(r.Target(), r.Addresses())
	// Output: portico:///inventory [10.0.0.8:43101 10.0.0.9:43101]
}
