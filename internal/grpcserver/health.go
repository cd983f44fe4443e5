package grpcserver

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// healthServer is grpc-go's health server whose Watch streams end once the
// drain is over. A Watch stream never ends on its own, and GracefulStop
// waits for every stream: without this, each client that health-checks the
// service (every edge and order instance does) would hold shutdown open
// for the whole grace and then have its in-flight calls cut.
type healthServer struct {
	*health.Server
	stopping context.Context // done when the drain ends
}

// Watch streams the status as grpc-go's does, until the client leaves or
// the drain ends; then it sends NOT_SERVING (again, if grpc-go's Watch had
// sent it) and ends with UNAVAILABLE, and the client's health check treats
// the instance as gone.
func (h *healthServer) Watch(in *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	stop := context.AfterFunc(h.stopping, cancel)
	defer stop()
	err := h.Server.Watch(in, &watchStream{Health_WatchServer: stream, ctx: ctx})
	if h.stopping.Err() != nil {
		// The drain may end the stream before grpc-go's Watch sent it
		// the NOT_SERVING of the shutdown (both were ready at once): say
		// it here, so every watcher learns it before the stream ends.
		_ = stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING})
		return status.Error(codes.Unavailable, "server shutting down")
	}
	return err
}

type watchStream struct {
	healthpb.Health_WatchServer
	ctx context.Context
}

func (w *watchStream) Context() context.Context { return w.ctx }
