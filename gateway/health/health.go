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

// DefaultMaxAge is how long a Checker reuses a report (WithMaxAge): at most
// one round of checks a second however often /health is called, so an
// unauthenticated caller cannot turn each of its requests into one call
// per upstream.
const DefaultMaxAge = time.Second

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
	maxAge  time.Duration

	mu  sync.Mutex
	cur *round // the latest round, finished or under way; nil before the first
}

// round is one check of every dependency; rep and at are written before
// done is closed and only read after.
type round struct {
	done chan struct{}
	rep  Report
	at   time.Time
}

// Option configures a Checker.
type Option func(*Checker)

// WithMaxAge sets how long a report is reused: zero means DefaultMaxAge;
// negative means every Check asks the dependencies (rounds still never
// overlap).
func WithMaxAge(d time.Duration) Option { return func(c *Checker) { c.maxAge = d } }

// NewChecker returns a checker reporting as service; timeout <= 0 means
// DefaultTimeout.
func NewChecker(service string, deps []Dependency, timeout time.Duration, opts ...Option) *Checker {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Checker{service: service, deps: append([]Dependency(nil), deps...), timeout: timeout}
	for _, o := range opts {
		o(c)
	}
	if c.maxAge == 0 {
		c.maxAge = DefaultMaxAge
	}
	return c
}

// Check returns the report of the latest round when it finished less
// than the max age ago; else it joins the round under way, or starts one.
// The caller owns the Report it gets (a copy). A round runs to its end
// even when the caller that started it goes away (each dependency's check
// is bounded by the timeout), since other callers may be waiting on it.
func (c *Checker) Check(ctx context.Context) Report {
	c.mu.Lock()
	r := c.cur
	if r == nil || (r.finished() && (c.maxAge < 0 || time.Since(r.at) >= c.maxAge)) {
		r = &round{done: make(chan struct{})}
		c.cur = r
		c.mu.Unlock()
		r.rep = c.check(context.WithoutCancel(ctx))
		r.at = time.Now()
		close(r.done)
		return r.rep.clone()
	}
	c.mu.Unlock()
	<-r.done // bounded by the timeout
	return r.rep.clone()
}

func (r *round) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r Report) clone() Report {
	r.Dependencies = append([]DependencyStatus{}, r.Dependencies...)
	return r
}

// check asks every dependency in parallel and returns the report.
func (c *Checker) check(ctx context.Context) Report {
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
