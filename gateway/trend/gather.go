package trend

import (
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// The series read (gateway/edgemetrics).
const (
	requestsName = "portico_gateway_requests_total"
	durationName = "portico_gateway_request_duration_seconds"
	limitedName  = "portico_gateway_rate_limited_total"
	inFlightName = "portico_gateway_in_flight_refused_total"
	tripsName    = "portico_upstream_breaker_transitions_total"
)

// InFlightLayer prefixes the in-flight caps' refusals in History.Limited:
// in_flight_per_client and in_flight_per_caller (a route group's name has
// no underscore, so none collides).
const InFlightLayer = "in_flight_per_"

// cum is one upstream's cumulative counts at a sample.
type cum struct {
	requests, errors float64
	buckets          []bucket // by upper bound, cumulative counts
}

type bucket struct{ le, count float64 }

// counts is everything one sample reads.
type counts struct {
	upstreams map[string]*cum
	limited   map[string]float64 // by layer
	trips     map[string]float64 // transitions to open, by breaker
}

// read sums the families into counts: requests and 5xx answers by
// upstream (requests with no upstream are left out), latency buckets by
// upstream and refusals by layer.
func read(fams []*dto.MetricFamily) counts {
	c := counts{upstreams: map[string]*cum{}, limited: map[string]float64{}, trips: map[string]float64{}}
	up := func(m *dto.Metric) *cum {
		name := label(m, "upstream")
		if name == "" {
			return nil
		}
		u := c.upstreams[name]
		if u == nil {
			u = &cum{}
			c.upstreams[name] = u
		}
		return u
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case requestsName:
				if u := up(m); u != nil {
					v := m.GetCounter().GetValue()
					u.requests += v
					if strings.HasPrefix(label(m, "code"), "5") {
						u.errors += v
					}
				}
			case durationName:
				if u := up(m); u != nil {
					u.buckets = addBuckets(u.buckets, m.GetHistogram())
				}
			case limitedName:
				c.limited[label(m, "layer")] += m.GetCounter().GetValue()
			case inFlightName:
				c.limited[InFlightLayer+label(m, "cap")] += m.GetCounter().GetValue()
			case tripsName:
				if label(m, "to") == "open" {
					c.trips[label(m, "breaker")] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return c
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// addBuckets adds h's classic buckets (and +Inf) into bs.
func addBuckets(bs []bucket, h *dto.Histogram) []bucket {
	add := func(le, n float64) {
		i := sort.Search(len(bs), func(i int) bool { return bs[i].le >= le })
		if i < len(bs) && bs[i].le == le {
			bs[i].count += n
			return
		}
		bs = append(bs, bucket{})
		copy(bs[i+1:], bs[i:])
		bs[i] = bucket{le, n}
	}
	for _, b := range h.GetBucket() {
		add(b.GetUpperBound(), float64(b.GetCumulativeCount()))
	}
	add(math.Inf(1), float64(h.GetSampleCount()))
	return bs
}

// sub is c minus an earlier o: the counts between the two samples. A
// counter that went down (a restart) counts from zero.
func (c *cum) sub(o *cum) cum {
	if o == nil || c.requests < o.requests {
		o = &cum{}
	}
	d := cum{requests: c.requests - o.requests, errors: max(0, c.errors-o.errors)}
	for _, b := range c.buckets {
		n := b.count
		for _, ob := range o.buckets {
			if ob.le == b.le {
				n -= ob.count
			}
		}
		d.buckets = append(d.buckets, bucket{b.le, max(0, n)})
	}
	return d
}

// quantile is Prometheus's histogram_quantile over cumulative buckets:
// linear within the bucket that holds rank q, the highest finite bound
// when it falls in +Inf; 0 without observations.
func quantile(q float64, bs []bucket) float64 {
	if len(bs) == 0 || bs[len(bs)-1].count == 0 {
		return 0
	}
	rank := q * bs[len(bs)-1].count
	i := sort.Search(len(bs), func(i int) bool { return bs[i].count >= rank })
	if math.IsInf(bs[i].le, 1) {
		if i == 0 {
			return 0
		}
		return bs[i-1].le
	}
	lo, below := 0.0, 0.0
	if i > 0 {
		lo, below = bs[i-1].le, bs[i-1].count
	}
	in := bs[i].count - below
	if in == 0 {
		return bs[i].le
	}
	return lo + (bs[i].le-lo)*(rank-below)/in
}
