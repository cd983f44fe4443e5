package inflight_test

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/portico-gateway/portico/gateway/inflight"
)

func ExampleCounter() {
	calls := inflight.New()
	conn, err := grpc.NewClient("127.0.0.1:43101", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(calls)) // every call on conn is counted on its instance
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	n, ok := calls.InFlight("127.0.0.1:43101")
	fmt.Println(n, ok)
	_, ok = calls.InFlight("inventory:43101") // a name, not an IP:port
	fmt.Println(ok)
	// Output:
	// 0 true
	// false
}
