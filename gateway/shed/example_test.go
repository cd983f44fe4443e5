package shed_test

import (
	"context"
	"fmt"
	"time"

	"github.com/portico-gateway/portico/gateway/shed"
)

func Example() {
	l, _ := shed.New(2, 0) // two slots, nobody waits
	ctx := context.Background()
	for i := range 3 {
		if err := l.Acquire(ctx, 10*time.Millisecond); err != nil {
			fmt.Println("request", i+1, "shed:", err)
			continue
		}
		fmt.Println("request", i+1, "admitted")
	}
	l.Release()
	fmt.Println("in flight:", l.InFlight())
	// Output:
	// request 1 admitted
	// request 2 admitted
	// request 3 shed: shed: overloaded
	// in flight: 1
}
