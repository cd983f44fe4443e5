package call_test

import (
	"context"
	"fmt"

	"github.com/portico-gateway/portico/interceptors/call"
)

// Layers share one call's state: the chain's top makes it, the deadline
// layer names the deadline's owner, retry numbers the attempt, and the
// innermost layer records the instance that took it for the breaker above.
func Example() {
	var st call.State
	ctx := call.NewContext(context.Background(), &st) // the chain's top, once per call

	call.From(ctx).SetOwner(call.Caller)               // deadline: the caller's deadline binds
	call.From(ctx).SetAttempt(1)                       // retry: the first attempt
	call.From(ctx).SetInstance("10.0.0.7:43101", true) // eject: that instance's breaker judged it

	addr, judged := call.From(ctx).Instance() // breaker, after the attempts
	fmt.Println(call.From(ctx).Owner(), call.From(ctx).Attempt(), addr, judged)
	// Output: caller 1 10.0.0.7:43101 true
}
