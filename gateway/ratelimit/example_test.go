package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/portico-gateway/portico/gateway/ratelimit"
)

// Three layers decided together: the route group's quota refuses the
// third request, and the refusal consumes nothing of the caller's quota.
func Example() {
	store, err := ratelimit.NewLocal()
	if err != nil {
		panic(err)
	}
	req := &ratelimit.Request{Quotas: []ratelimit.Quota{
		{Key: "caller:alice", Limit: ratelimit.Limit{Rate: 10, Period: time.Minute}},
		{Key: "group:order-writes", Limit: ratelimit.Limit{Rate: 2, Period: time.Minute}},
		{Key: "global", Limit: ratelimit.Limit{Rate: 1000, Period: time.Minute}},
	}, Caller: "alice"}
	for range 3 {
		d, _ := store.Allow(context.Background(), req)
		fmt.Printf("allowed %v, refused by quota %d, caller has %d left\n", d.Allowed, d.Denied, d.Results[0].Remaining)
	}
	// Output:
	// allowed true, refused by quota -1, caller has 9 left
	// allowed true, refused by quota -1, caller has 8 left
	// allowed false, refused by quota 1, caller has 8 left
}
