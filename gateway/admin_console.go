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

// consoleRoutes serves the console's files (gateway/console). Without a
// console session (console_session.go) "/" is the sign-in page, whose
// script and the stylesheet are open to anyone; with one, "/" is the
// console and its modules load, and without one they are a 401 problem.
// The session only lets the browser load the console: the page's script
// sends the admin token the operator typed (sessionStorage) as a bearer
// header to the admin-only endpoints, which take no cookie, so no change
// rests on the cookie alone (console/doc.go says why).
func (s *Server) consoleRoutes() map[string]adminRoute {
	out := map[string]adminRoute{}
	for _, p := range console.Paths() {
		out[p] = adminRoute{http.MethodGet, true, s.consoleFile}
	}
	return out
}

// consoleFile serves one of the console's paths, as consoleRoutes says.
func (s *Server) consoleFile(w http.ResponseWriter, r *http.Request, sn *snapshot) {
	switch {
	case console.Public(r.URL.Path), s.consoleSession(r, sn):
		console.Serve(w, r)
	case r.URL.Path == "/":
		console.ServeSignIn(w, r)
	default:
		console.SessionBound(w.Header())
		s.writeProblem(w, r, problem.New(problem.CodeUnauthenticated,
			"The console's modules need a console session: sign in at / (POST /admin/session)."))
	}
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
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil { // "minutes=1;x" or "%zz": url.Query would drop it and serve the default
		s.writeProblem(w, r, problem.New(problem.CodeInvalidArgument, "The query string is malformed (a ';' or a bad %-escape): minutes must be given once, as a whole number from 1 to "+strconv.Itoa(maxTrafficMinutes)+"."))
		return
	}
	span, bad := trafficMinutes(q)
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
