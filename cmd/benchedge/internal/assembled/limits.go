package assembled

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/time/rate"
)

// bucketSet is one token-bucket layer keyed by caller or group.
type bucketSet struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

func (s *bucketSet) get(key string) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.m[key]
	if !ok {
		l = rate.NewLimiter(rate.Limit(limitRate), limitRate)
		s.m[key] = l
	}
	return l
}

// group names the route group of r, as the edge's limits.groups does
// ("": none).
func group(r *http.Request) string {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/inventory/") {
		return "inventory-reads"
	}
	return ""
}

// layer is one token bucket a request draws from.
type layer struct {
	name string
	l    *rate.Limiter
}

// limits applies three layers (per caller, per route group, global) and
// sets the RateLimit headers of each (draft-ietf-httpapi-ratelimit-headers)
// and X-RateLimit-Limit / -Remaining of the tightest; a refusal is 429.
func limits(next http.Handler) http.Handler {
	callers := &bucketSet{m: map[string]*rate.Limiter{}}
	groups := &bucketSet{m: map[string]*rate.Limiter{}}
	global := rate.NewLimiter(rate.Limit(limitRate), limitRate)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := r.Context().Value(principalKey{}).(principal)
		layers := []layer{{"caller", callers.get(p.subject)}}
		if grp := group(r); grp != "" {
			layers = append(layers, layer{grp, groups.get(grp)})
		}
		layers = append(layers, layer{"global", global})
		var policy, state []string
		ok, tightest := true, 0.0
		for i, ly := range layers {
			if !ly.l.Allow() {
				ok = false
			}
			left := ly.l.Tokens()
			if i == 0 || left < tightest {
				tightest = left
			}
			policy = append(policy, fmt.Sprintf("%q;q=%d;w=1", ly.name, limitRate))
			state = append(state, fmt.Sprintf("%q;r=%d;t=1", ly.name, int(left)))
		}
		h := w.Header()
		h.Set("RateLimit-Policy", strings.Join(policy, ", "))
		h.Set("RateLimit", strings.Join(state, ", "))
		h.Set("X-RateLimit-Limit", fmt.Sprint(limitRate))
		h.Set("X-RateLimit-Remaining", fmt.Sprint(int(tightest)))
		if !ok {
			h.Set("Retry-After", "1")
			writeProblem(w, r, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "A rate limit is used up.")
			return
		}
		next.ServeHTTP(w, r)
	})
}
