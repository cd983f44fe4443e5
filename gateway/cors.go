package gateway

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/route"
)

// cors answers the CORS protocol from a CORSConfig; nil when CORS is off.
type cors struct {
	anyOrigin bool
	origins   []string
	methods   []string
	headers   []string // lower case
	allowM    string   // Access-Control-Allow-Methods
	allowH    string   // Access-Control-Allow-Headers
	expose    string   // Access-Control-Expose-Headers
	maxAge    string
}

// newCORS builds the CORS answers of c; routes give the default methods
// (routeMethods).
func newCORS(c config.CORSConfig, routes []*route.Route) *cors {
	if len(c.AllowedOrigins) == 0 {
		return nil
	}
	or := func(xs, def []string) []string {
		if len(xs) == 0 {
			return def
		}
		return xs
	}
	x := &cors{
		anyOrigin: slices.Contains(c.AllowedOrigins, "*"),
		origins:   c.AllowedOrigins,
		methods:   or(c.AllowedMethods, routeMethods(routes)),
		expose:    strings.Join(or(c.ExposedHeaders, config.DefaultCORSExposed), ", "),
		maxAge:    strconv.Itoa(int(c.MaxAge.Seconds())),
	}
	if c.MaxAge == 0 {
		x.maxAge = strconv.Itoa(int(config.DefaultCORSMaxAge.Seconds()))
	}
	hs := or(c.AllowedHeaders, config.DefaultCORSHeaders)
	for _, h := range hs {
		x.headers = append(x.headers, strings.ToLower(h))
	}
	x.allowM, x.allowH = strings.Join(x.methods, ", "), strings.Join(hs, ", ")
	return x
}

// routeMethods are the methods routes serve, in the order of corsOrder and
// then by name, with HEAD wherever GET is (a GET route serves HEAD).
func routeMethods(routes []*route.Route) []string {
	var ms []string
	add := func(m string) {
		if !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	for _, r := range routes {
		add(r.Method)
		if r.Method == http.MethodGet {
			add(http.MethodHead)
		}
	}
	slices.SortFunc(ms, func(a, b string) int {
		if d := corsOrder(a) - corsOrder(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return ms
}

// corsOrder ranks the usual methods as RFC 9110 lists them; others follow.
func corsOrder(m string) int {
	if i := slices.Index([]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}, m); i >= 0 {
		return i
	}
	return 99
}

// handleCORS adds CORS headers for an allowed origin and answers a
// preflight; it reports whether it answered. It runs before
// authentication: a preflight carries no credentials.
func (s *Server) handleCORS(w *responseWriter, r *http.Request) bool {
	c := w.ex.snap.cors
	origin := r.Header.Get("Origin")
	if c == nil || origin == "" {
		return false
	}
	w.Header().Add("Vary", "Origin")
	allowed := c.anyOrigin || slices.Contains(c.origins, origin)
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if !preflight {
		if allowed {
			c.allowOrigin(w, origin)
			w.Header().Set("Access-Control-Expose-Headers", c.expose)
		}
		return false
	}
	w.ex.route = "preflight"
	w.Header().Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
	if reason := c.refuse(allowed, r); reason != "" {
		s.writeProblem(w, r, problem.New(problem.CodeForbidden, "CORS preflight refused: "+reason+"."))
		return true
	}
	c.allowOrigin(w, origin)
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", c.allowM)
	h.Set("Access-Control-Allow-Headers", c.allowH)
	h.Set("Access-Control-Max-Age", c.maxAge)
	w.WriteHeader(http.StatusNoContent)
	return true
}

func (c *cors) allowOrigin(w http.ResponseWriter, origin string) {
	if c.anyOrigin {
		origin = "*"
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
}

// refuse returns why a preflight is refused, or "".
func (c *cors) refuse(allowed bool, r *http.Request) string {
	if !allowed {
		return "the origin is not allowed"
	}
	if m := r.Header.Get("Access-Control-Request-Method"); !slices.Contains(c.methods, m) {
		return "method " + m + " is not allowed"
	}
	for _, v := range r.Header.Values("Access-Control-Request-Headers") {
		for h := range strings.SplitSeq(v, ",") {
			if h = strings.ToLower(strings.TrimSpace(h)); h != "" && !slices.Contains(c.headers, h) {
				return "header " + h + " is not allowed"
			}
		}
	}
	return ""
}
