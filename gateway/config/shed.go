package config

import (
	"fmt"
	"time"

	"github.com/portico-gateway/portico/gateway/route/selector"
)

// Defaults of the shed section.
const (
	// DefaultMaxInFlight caps the /api requests one edge works on at once
	// when the config sets no cap.
	DefaultMaxInFlight = 1024
	// DevMaxInFlight is the dev profile's cap: a laptop's edge serves
	// thousands of requests a second per core at well under a millisecond
	// each, so 64 in flight is ample for any interactive use, and under an
	// overload it keeps the requests it admits quick (make bench-overload).
	DevMaxInFlight = 64
	// DefaultShedQueue bounds the requests waiting for a slot at once when
	// shed.max_wait is set and shed.max_queue is not.
	DefaultShedQueue = 64
	// DefaultShedRetryAfter is the Retry-After of a shed answer.
	DefaultShedRetryAfter = time.Second
	// DefaultMaxInFlightPerClient caps the /api requests of one client
	// address whose bodies are still arriving.
	DefaultMaxInFlightPerClient = 64
	// DefaultMaxInFlightPerCaller caps the /api requests of one
	// authenticated caller that the edge works on at once; an edge cap
	// (max_in_flight) below four times it lowers the default to a quarter
	// of that cap, so one caller never fills the edge (dev: 64 → 16).
	DefaultMaxInFlightPerCaller = 64
)

// ShedConfig caps the /api requests the edge works on at once (load
// shedding). While a cap is full, excess is answered at once, before its
// body is read or it is logged, with 503 OVERLOADED and Retry-After. A
// request takes its slots only once its body is in hand and its caller
// authenticated (http.body_timeout), so a slow client holds none. The
// operational endpoints
// (/health, /healthz/*, /metrics, /openapi.json, /problems) are never
// shed, so probes and scrapes see the truth during an overload.
type ShedConfig struct {
	// MaxInFlight caps concurrent /api requests at this edge. Zero means
	// DefaultMaxInFlight; -1 means no cap (below -1 is an error, so a
	// typo such as -5 cannot turn shedding off unnoticed). A cap above what the
	// edge's CPUs serve within the latency you want only lets requests
	// queue inside the edge: set it to about the edge's throughput times
	// its unloaded latency, with room to spare.
	MaxInFlight int `yaml:"max_in_flight,omitempty"`
	// MaxWait is how long a request may wait for a slot when none is free,
	// never longer than its own Grpc-Timeout. Zero means no wait: excess
	// is shed at once (the default, and the fastest refusal).
	MaxWait time.Duration `yaml:"max_wait,omitempty"`
	// MaxQueue bounds the requests waiting for a slot at once, per cap;
	// beyond it excess is shed at once. Zero means DefaultShedQueue; -1
	// means nobody waits (below -1 is an error). Used only with MaxWait.
	MaxQueue int `yaml:"max_queue,omitempty"`
	// RetryAfter is the Retry-After of a shed answer, rounded up to whole
	// seconds. Zero means DefaultShedRetryAfter.
	RetryAfter time.Duration `yaml:"retry_after,omitempty"`
	// MaxInFlightPerClient caps the /api requests of one client address
	// (limits.clients: the socket peer, or the address a trusted proxy
	// forwarded; an IPv6 address counts for its /64) whose bodies are
	// still arriving (http.body_timeout), so that one address cannot hold
	// every connection with slow bodies. Excess is 429 TOO_MANY_IN_FLIGHT
	// with Retry-After, at once. A request counts only until its body is
	// in hand, so clients behind a proxy that forwards whole bodies
	// rarely meet it. Zero means DefaultMaxInFlightPerClient; -1 means no
	// cap.
	MaxInFlightPerClient int `yaml:"max_in_flight_per_client,omitempty"`
	// MaxInFlightPerCaller caps the /api requests of one authenticated
	// caller (the trusted client id, else the subject within its tenant,
	// as limits key callers) that the edge works on at once, so that one
	// caller cannot take every slot of max_in_flight. Excess is 429
	// TOO_MANY_IN_FLIGHT with Retry-After. Zero means
	// DefaultMaxInFlightPerCaller, or a quarter of max_in_flight (at
	// least 1) when that is smaller; -1 means no cap.
	MaxInFlightPerCaller int `yaml:"max_in_flight_per_caller,omitempty"`
	// Groups cap route groups on top of the edge's cap, so that one kind
	// of traffic (catalogue reads) cannot take every slot from another
	// (order writes). A route belongs to at most one group.
	Groups []ShedGroupConfig `yaml:"groups,omitempty"`
}

// ShedGroupConfig is one route group's in-flight cap.
type ShedGroupConfig struct {
	// Name labels the group in metrics and logs: 1-32 characters of
	// [a-z0-9-], starting with a letter. Required, unique.
	Name string `yaml:"name"`
	// Routes are the selectors of the group's routes. A selector is
	// "[METHOD ]TARGET" (package gateway/route/selector): TARGET is "*"
	// (every route), a path template ("/api/orders/{id}"), a route group
	// ("/api/orders/**": that template and every one below it), an RPC
	// ("portico.order.v1.OrderService/GetOrder", also with a leading "/"
	// or a "." before the method) or a service
	// ("portico.order.v1.OrderService/*"); METHOD narrows it to that
	// method. Required; each must select a route.
	Routes []string `yaml:"routes"`
	// MaxInFlight caps the group's concurrent requests. Required,
	// positive.
	MaxInFlight int `yaml:"max_in_flight"`
}

func (c ShedConfig) withDefaults() ShedConfig {
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = DefaultShedQueue
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = DefaultShedRetryAfter
	}
	if c.MaxInFlightPerClient == 0 {
		c.MaxInFlightPerClient = DefaultMaxInFlightPerClient
	}
	if c.MaxInFlightPerCaller == 0 {
		c.MaxInFlightPerCaller = DefaultMaxInFlightPerCaller
		if c.MaxInFlight > 0 {
			c.MaxInFlightPerCaller = min(c.MaxInFlightPerCaller, max(1, c.MaxInFlight/4))
		}
	}
	return c
}

func (c ShedConfig) validate(v *validator) {
	v.offOrCount("shed.max_in_flight", c.MaxInFlight, "no cap")
	v.offOrCount("shed.max_queue", c.MaxQueue, "nobody waits")
	v.nonNegative("shed.max_wait", c.MaxWait)
	v.nonNegative("shed.retry_after", c.RetryAfter)
	v.capOrOff("shed.max_in_flight_per_client", c.MaxInFlightPerClient)
	v.capOrOff("shed.max_in_flight_per_caller", c.MaxInFlightPerCaller)
	seen := map[string]int{}
	for i, g := range c.Groups {
		p := fmt.Sprintf("shed.groups[%d]", i)
		if !validName(g.Name) {
			v.add(p+".name", "want 1-32 characters of [a-z0-9-] starting with a letter, got %q", g.Name)
		} else if j, dup := seen[g.Name]; dup {
			v.add(p+".name", "%q is also shed.groups[%d]", g.Name, j)
		}
		seen[g.Name] = i
		if len(g.Routes) == 0 {
			v.add(p+".routes", "at least one route is required")
		}
		for j, k := range g.Routes {
			if _, err := selector.Parse(k); err != nil {
				v.add(fmt.Sprintf("%s.routes[%d]", p, j), "%v", err)
			}
		}
		if g.MaxInFlight < 1 {
			v.add(p+".max_in_flight", "must be positive, got %d", g.MaxInFlight)
		}
	}
}

// capOrOff refuses a cap below -1 (-1 turns it off, 0 is the default).
func (v *validator) capOrOff(path string, n int) {
	if n < -1 {
		v.add(path, "want a positive cap, or -1 for none, got %d", n)
	}
}
