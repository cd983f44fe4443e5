package health

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Statuses in a Report.
const (
	Up       = "UP"
	Down     = "DOWN"
	Degraded = "DEGRADED"
)

// DefaultTimeout bounds each dependency's check when the Checker's is zero.
const DefaultTimeout = 300 * time.Millisecond

// Dependency is one upstream to check.
type Dependency struct {
	// Name appears in the report, e.g. "inventory".
	Name string
	// Service is the grpc.health.v1 service name to ask about; "" asks for
	// the server's overall health.
	Service string
	// Conn reaches the upstream.
	Conn grpc.ClientConnInterface
	// Usable, when set, reports whether the connection that real calls
	// take (which may differ from Conn) can carry one now; it may wait
	// until ctx ends for it to become so. A SERVING dependency whose
	// Usable says no is DOWN: the instance is up, but calls would fail.
	Usable func(ctx context.Context) bool
}

// Report is the /health body.
type Report struct {
	Status       string             `json:"status"`
	Service      string             `json:"service"`
	Dependencies []DependencyStatus `json:"dependencies"`
}

// DependencyStatus is one dependency's line in a Report.
type DependencyStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Checker checks a fixed set of dependencies.
type Checker struct {
	service string
	deps    []Dependency
	timeout time.Duration
}

// NewChecker returns a checker reporting as service; timeout <= 0 means
// DefaultTimeout.
func NewChecker(service string, deps []Dependency, timeout time.Duration) *Checker {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Checker{service: service, deps: append([]Dependency(nil), deps...), timeout: timeout}
}

// Check asks every dependency in parallel and returns the report.
func (c *Checker) Check(ctx context.Context) Report {
	r := Report{Status: Up, Service: c.service, Dependencies: make([]DependencyStatus, len(c.deps))}
	var wg sync.WaitGroup
	for i, d := range c.deps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Dependencies[i] = DependencyStatus{Name: d.Name, Status: c.one(ctx, d)}
		}()
	}
	wg.Wait()
	for _, d := range r.Dependencies {
		if d.Status != Up {
			r.Status = Degraded
		}
	}
	return r
}

func (c *Checker) one(ctx context.Context, d Dependency) string {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(d.Conn).Check(ctx, &healthpb.HealthCheckRequest{Service: d.Service})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return Down
	}
	if d.Usable != nil && !d.Usable(ctx) {
		return Down
	}
	return Up
}
