package gateway

import (
	"context"
	"time"

	"google.golang.org/grpc/connectivity"
)

// shutdown is the edge's stop sequence, once Serve's context ends:
//
//  1. /healthz/ready answers 503 at once, and every answer carries
//     Connection: close, so clients and load balancers move away;
//  2. the edge keeps serving for drain_delay (the preStop delay);
//  3. the listener closes: new connections are refused, idle ones closed;
//     from here a reload no longer moves the listeners;
//  4. open streams end with the terminal problem STREAM_RECONNECT (the
//     client reconnects, to another instance), and
//     in-flight requests finish within shutdown_grace (by default longer
//     than the longest route timeout), then what is left is cut; requests
//     on connections a reload retired (listeners.go) are waited for too;
//  5. the admin API stops (it showed the drain until here), Serve returns
//     nil and the upstream connections close.
//
// drain_delay and shutdown_grace are read from the live config when
// shutdown begins, so a reload changes them. now skips the drain delay
// (the listener failed).
func (s *Server) shutdown(now bool) {
	s.draining.Store(true)
	cfg := s.Config()
	s.log.Info("shutting down", "drainDelay", cfg.DrainDelay.String(), "grace", cfg.ShutdownGrace.String())
	if cfg.DrainDelay > 0 && !now {
		if s.drainWait != nil {
			s.drainWait(cfg.DrainDelay)
		} else {
			t := time.NewTimer(cfg.DrainDelay)
			<-t.C
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	s.endStreams()
	if !shutdownAll(sctx, s.lis.stopAPI()) {
		s.log.Warn("shutdown grace expired; cutting in-flight requests")
	}
	actx, acancel := context.WithTimeout(context.Background(), time.Second)
	defer acancel()
	shutdownAll(actx, s.lis.stopAdmin())
	s.lis.wg.Wait()
	s.serving.Store(false)
	s.log.Info("stopped")
}

// Draining reports whether shutdown has begun.
func (s *Server) Draining() bool { return s.draining.Load() }

// notReady returns why the edge should get no traffic, or "" when it
// should: not serving yet, draining, or (ops.ready_requires) a required
// upstream without a usable instance. It never calls an upstream: it reads
// the connections' state.
func (s *Server) notReady(sn *snapshot) string {
	switch {
	case s.draining.Load():
		return "draining"
	case !s.serving.Load():
		return "not serving yet"
	}
	for _, name := range sn.cfg.Ops.ReadyRequires {
		if uc, ok := sn.upstreams[name]; ok && !usable(uc.cc.GetState()) {
			return "no usable instance of upstream " + name
		}
	}
	return ""
}

// usable: a connection with a READY instance, or IDLE (it connects on the
// next call).
func usable(st connectivity.State) bool {
	return st == connectivity.Ready || st == connectivity.Idle
}
