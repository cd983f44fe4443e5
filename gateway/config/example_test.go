package config_test

import (
	"fmt"

	"github.com/portico-gateway/portico/gateway/config"
)

// Parse fills in every default and names the field of every error.
func ExampleParse() {
	cfg, err := config.Parse([]byte(`
upstreams:
  - {name: inventory, addresses: [127.0.0.1:43101]}
  - {name: payment, addresses: [127.0.0.1:43102]}
  - {name: order, addresses: [127.0.0.1:43103]}
`))
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Listen, cfg.Upstreams[2].Timeout, cfg.Routes.MaxBodyBytes, cfg.Routes.MaxTimeout)

	_, err = config.Parse([]byte(`
upstreams:
  - name: order
    adresses: [127.0.0.1:43103]
    timeout: 5
`))
	fmt.Println(err)
	// Output:
	// 127.0.0.1:43100 5s 1048576 30s
	// gateway config: upstreams[0].adresses: unknown field (line 4); did you mean addresses?
	// upstreams[0].timeout: want a duration with a unit, such as 250ms or 5s, got "5" (line 5)
}
