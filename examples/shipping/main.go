// Command shipping is an example outside service for Portico: a gRPC
// ShippingService (in memory) with health and server reflection, which an
// edge serves after a reload, from shipping.binpb or by reflection,
// without being built with it.
//
//	go build -o shipping . && ./shipping -listen 127.0.0.1:50100
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	shippingv1 "example.com/shipping/gen/acme/shipping/v1"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:50100", "gRPC listen address (port 0: any free port)")
	flag.Parse()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	s := grpc.NewServer()
	shippingv1.RegisterShippingServiceServer(s, newService())
	healthpb.RegisterHealthServer(s, health.NewServer())
	reflection.Register(s) // grpc.reflection.v1 and v1alpha
	// The address on stdout tells a test (or a script) where it listens.
	fmt.Printf("shipping listening on %s\n", l.Addr())
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		<-sig
		s.GracefulStop()
	}()
	if err := s.Serve(l); err != nil {
		log.Fatal(err)
	}
}
