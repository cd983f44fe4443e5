package trend

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults and bounds (doc.go states the memory they give).
const (
	// Step is the time between samples.
	Step = 10 * time.Second
	// Keep is the points kept per upstream: 25 hours, so that the same
	// minutes a day earlier are still there.
	Keep = 9000
	// MaxUpstreams bounds the upstreams recorded.
	MaxUpstreams = 64
	// Window is the span of Summary and of the refusal counts.
	Window = 5 * time.Minute
)

// Point is one upstream's traffic over one Step.
type Point struct {
	T          int64   `json:"t"`          // the sample's time, Unix seconds
	Rate       float32 `json:"rate"`       // answers per second
	ErrorRatio float32 `json:"errorRatio"` // 5xx answers / answers; 0 without answers
	P99        float32 `json:"p99"`        // seconds; 0 without answers
}

// Summary is one upstream's traffic over the last Window.
type Summary struct {
	Requests   float64 `json:"requests"`
	Rate       float64 `json:"rate"`
	ErrorRatio float64 `json:"errorRatio"`
	P99        float64 `json:"p99"`
}

// snap is one sample's cumulative counts.
type snap struct {
	t time.Time
	c counts
}

// Recorder samples a Gatherer and keeps the history.
type Recorder struct {
	g      prometheus.Gatherer
	mu     sync.Mutex
	first  time.Time
	points map[string]*ring[Point]
	window *ring[snap] // the last Window of samples, for the summaries
}

// New returns a Recorder of g's series.
func New(g prometheus.Gatherer) *Recorder {
	return &Recorder{g: g, points: map[string]*ring[Point]{}, window: newRing[snap](int(Window/Step) + 1)}
}

// Record samples every Step until ctx ends.
func (r *Recorder) Record(ctx context.Context) {
	t := time.NewTicker(Step)
	defer t.Stop()
	r.Sample(time.Now())
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.Sample(now)
		}
	}
}

// Sample reads the registry at now and adds a point per upstream (from
// the second sample on: a point is the change since the previous one).
func (r *Recorder) Sample(now time.Time) {
	fams, _ := r.g.Gather() // a failing collector drops its series, not the sample
	c := read(fams)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first.IsZero() {
		r.first = now
	}
	if n := r.window.Len(); n > 0 {
		prev := r.window.At(n - 1)
		if dt := now.Sub(prev.t).Seconds(); dt > 0 {
			r.addPoints(now, dt, prev.c, c)
		}
	}
	r.window.Append(snap{now, c})
}

func (r *Recorder) addPoints(now time.Time, dt float64, prev, cur counts) {
	for name, u := range cur.upstreams {
		p, ok := prev.upstreams[name]
		if !ok {
			continue // new: its counts span an unknown time
		}
		pts := r.points[name]
		if pts == nil {
			if len(r.points) == MaxUpstreams {
				continue
			}
			pts = newRing[Point](Keep)
			r.points[name] = pts
		}
		d := u.sub(p)
		pt := Point{T: now.Unix(), Rate: float32(d.requests / dt), P99: float32(quantile(0.99, d.buckets))}
		if d.requests > 0 {
			pt.ErrorRatio = float32(d.errors / d.requests)
		}
		pts.Append(pt)
	}
}

// Upstream is one upstream's history for View.
type Upstream struct {
	Name    string  `json:"name"`
	Summary Summary `json:"summary"`
	// Recent are the points of the last span, oldest first; Previous the
	// points of the same minutes Offset earlier.
	Recent   []Point `json:"recent"`
	Previous []Point `json:"previous"`
}

// History is what View returns.
type History struct {
	Step   string `json:"step"`
	Window string `json:"window"`
	// Offset is how far back Previous lies: "24h0m0s" once the process
	// has run a day, else "1h0m0s" once it has run an hour, else "".
	Offset    string     `json:"offset"`
	Upstreams []Upstream `json:"upstreams"`
	// Limited counts refusals by rate-limit layer within Window, and the
	// in-flight caps' 429 TOO_MANY_IN_FLIGHT as in_flight_per_client and
	// in_flight_per_caller (InFlightLayer).
	Limited map[string]float64 `json:"limited"`
	// Trips counts each breaker's openings within Window: a breaker that
	// opens and half-opens between two looks still shows.
	Trips map[string]float64 `json:"trips"`
}

// View returns each upstream's summary and its points of the last span
// at now, with the same minutes an hour or a day earlier, upstreams by
// name. The summaries and refusal counts run from the window's oldest
// sample to a fresh read of the registry, so they move at once.
func (r *Recorder) View(now time.Time, span time.Duration) History {
	fams, _ := r.g.Gather()
	cur := read(fams)
	r.mu.Lock()
	defer r.mu.Unlock()
	h := History{Step: Step.String(), Window: Window.String(), Upstreams: []Upstream{}, Limited: map[string]float64{}, Trips: map[string]float64{}}
	var offset time.Duration
	switch up := now.Sub(r.first); {
	case r.first.IsZero():
	case up >= 24*time.Hour:
		offset = 24 * time.Hour
	case up >= time.Hour:
		offset = time.Hour
	}
	if offset > 0 {
		h.Offset = offset.String()
	}
	var oldest *snap
	if r.window.Len() > 0 {
		o := r.window.At(0)
		oldest = &o
	}
	for name, pts := range r.points {
		u := Upstream{Name: name, Recent: between(pts, now.Add(-span), now), Previous: []Point{}}
		if offset > 0 {
			u.Previous = between(pts, now.Add(-offset-span), now.Add(-offset))
		}
		if oldest != nil {
			u.Summary = summary(cur.upstreams[name], oldest.c.upstreams[name], now.Sub(oldest.t))
		}
		h.Upstreams = append(h.Upstreams, u)
	}
	sort.Slice(h.Upstreams, func(i, j int) bool { return h.Upstreams[i].Name < h.Upstreams[j].Name })
	if oldest != nil {
		for layer, n := range cur.limited {
			h.Limited[layer] = max(0, n-oldest.c.limited[layer])
		}
		for b, n := range cur.trips {
			h.Trips[b] = max(0, n-oldest.c.trips[b])
		}
	}
	return h
}

func summary(cur, old *cum, d time.Duration) Summary {
	if cur == nil || d <= 0 {
		return Summary{}
	}
	c := cur.sub(old)
	s := Summary{Requests: c.requests, Rate: c.requests / d.Seconds(), P99: quantile(0.99, c.buckets)}
	if c.requests > 0 {
		s.ErrorRatio = c.errors / c.requests
	}
	return s
}

// between returns pts's points with from < T <= to, oldest first.
func between(pts *ring[Point], from, to time.Time) []Point {
	lo := sort.Search(pts.Len(), func(i int) bool { return pts.At(i).T > from.Unix() })
	out := []Point{}
	for i := lo; i < pts.Len() && pts.At(i).T <= to.Unix(); i++ {
		out = append(out, pts.At(i))
	}
	return out
}
