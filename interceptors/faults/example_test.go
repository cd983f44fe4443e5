package faults_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func ExampleUnaryServerInterceptor() {
	// As from: portico order --faults "code=UNAVAILABLE,method=/portico.order.v1.OrderService/CreateOrder"
	rules, err := faults.Parse("code=UNAVAILABLE,method=/portico.order.v1.OrderService/CreateOrder")
	if err != nil {
		panic(err)
	}
	ic := faults.UnaryServerInterceptor(rules)
	handler := func(context.Context, any) (any, error) { return "order", nil }
	for _, m := range []string{"/portico.order.v1.OrderService/CreateOrder", "/portico.order.v1.OrderService/GetOrder"} {
		_, err := ic(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: m}, handler)
		fmt.Println(m, status.Code(err), rpcerr.Reason(err))
	}
	// Output:
	// /portico.order.v1.OrderService/CreateOrder Unavailable FAULT_INJECTED
	// /portico.order.v1.OrderService/GetOrder OK
}
