package gateway

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway/console"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/trend"
)

// consoleRoutes serves the console's files (gateway/console) to anyone:
// a sign-in shell with no data in it, whose script sends the admin token
// the operator types as a bearer header to the admin-only endpoints (a
// browser's navigation cannot carry that header; console/doc.go says why
// neither a cookie nor the URL may).
func (s *Server) consoleRoutes() map[string]adminRoute {
	out := map[string]adminRoute{}
	for _, p := range console.Paths() {
		out[p] = adminRoute{http.MethodGet, true, func(w http.ResponseWriter, r *http.Request, _ *snapshot) { console.Serve(w, r) }}
	}
	return out
}

// trafficSpan is the span of GET /admin/traffic's points unless
// ?minutes= says otherwise (1 to maxTrafficMinutes).
const (
	trafficSpan       = 15 * time.Minute
	maxTrafficMinutes = 60
)

// trafficRoutes serves GET /admin/traffic: each upstream's recent traffic
// from the edge's own metrics (gateway/trend).
func (s *Server) trafficRoutes() map[string]adminRoute {
	return map[string]adminRoute{"/admin/traffic": {http.MethodGet, false, s.adminTraffic}}
}

func (s *Server) adminTraffic(w http.ResponseWriter, r *http.Request, _ *snapshot) {
	span, bad := trafficMinutes(r.URL.Query())
	if bad != "" {
		s.writeProblem(w, r, problem.New(problem.CodeInvalidArgument, bad))
		return
	}
	writeJSON(w, http.StatusOK, s.trend.View(time.Now(), span))
}

// trafficMinutes reads ?minutes=: absent means trafficSpan; present, it
// must be given once and be a whole number from 1 to maxTrafficMinutes in
// plain digits. An empty or repeated value is refused rather than read as
// the default or as its first value: the caller meant something. bad is
// the problem's detail when the value is refused.
func trafficMinutes(q url.Values) (span time.Duration, bad string) {
	vs, given := q["minutes"]
	if !given {
		return trafficSpan, ""
	}
	want := "minutes must be given once, as a whole number from 1 to " + strconv.Itoa(maxTrafficMinutes)
	if len(vs) != 1 {
		return 0, want + "; it was given " + strconv.Itoa(len(vs)) + " times."
	}
	m := vs[0]
	n, err := strconv.Atoi(m)
	if err != nil || n < 1 || n > maxTrafficMinutes || strings.TrimLeft(m, "0123456789") != "" {
		if len(m) > 16 {
			m = m[:16] + "..."
		}
		return 0, want + ", not " + strconv.Quote(m) + "."
	}
	return time.Duration(n) * time.Minute, ""
}

// newTrend is the Recorder of the edge's registry; Serve runs it.
func (s *Server) newTrend() *trend.Recorder { return trend.New(s.registry) }
