package breaker_test

import (
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/breaker"
)

func ExampleBreaker() {
	b, _ := breaker.New(breaker.Settings{ // zero values: 2 failures open it for 800ms
		Name: "order",
		OnStateChange: func(name string, from, to breaker.State) {
			fmt.Printf("%s: %v -> %v\n", name, from, to)
		},
	})
	timeout := status.Error(codes.DeadlineExceeded, "order took 350ms")
	for range 2 {
		done, _ := b.Allow()
		done(timeout)
	}
	_, err := b.Allow()
	fmt.Println(err, "for", b.RetryAfter().Round(100*time.Millisecond))
	// After the cool-down one probe decides; TestOpensAfterConsecutiveFailuresAndRecovers
	// moves time with testing/synctest to show it.

	// Output:
	// order: closed -> open
	// breaker: circuit open for 800ms
}
