package metrics_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/metrics"
)

func ExampleNew() {
	reg := prometheus.NewRegistry() // the process's own, served on /metrics
	m, err := metrics.New(reg)
	if err != nil {
		panic(err)
	}
	conn, err := interceptors.Dial("dns:///inventory:43101",
		interceptors.WithUpstream("inventory"), interceptors.WithMetrics(m))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	m.Overloaded("inventory") // what the bulkhead reports when it refuses a call
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		fmt.Println(mf.GetName())
	}
	// Output:
	// portico_upstream_bulkhead_rejections_total
}
