package breaker_test

import (
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/clock"
)

func ExampleBreaker() {
	fake := clock.NewFake(time.Date(2026, 8, 18, 3, 0, 0, 0, time.UTC))
	b, _ := breaker.New(breaker.Settings{ // zero values: 2 failures open it for 800ms
		Name:  "order",
		Clock: fake,
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
	fmt.Println(err, "for", b.RetryAfter())

	fake.Advance(800 * time.Millisecond)
	done, _ := b.Allow() // the probe
	done(nil)
	// Output:
	// order: closed -> open
	// breaker: circuit open for 800ms
	// order: open -> half-open
	// order: half-open -> closed
}
