package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/portico-gateway/portico/gateway/route"
)

// Direct calls: the edge has matched a request's route (route.Table)
// before grpc-gateway's ServeMux sees it, and the mux would match it a
// second time, scanning every handler of the method, and copy the request
// to put the pattern in its context, which nothing reads. For each route
// the snapshot captures, once when its mux is built, the mux's handler
// and runtime.Pattern (captureDirect); a request then runs the part of
// ServeHTTP that can pick a handler, on the patterns that can match its
// path only, and calls the route's handler itself. Whenever the mux
// might answer otherwise (another pattern that it tries first matches,
// an error, a route not captured) the request goes to the mux as before,
// so every answer, its errors included, is the mux's.
//
// What ServeHTTP does that a direct call leaves out: the
// X-HTTP-Method-Override check (off: WithDisableHTTPMethodOverride), the
// path length fallback (off: WithDisablePathLengthFallback) and
// runtime.HTTPPattern in the handler's context (nothing in Portico or
// grpc-gateway reads it; the handler gets the forwarded request as is).

// muxUnescaping is the mux's unescaping mode (newMux), which a direct
// call needs to split and match the path as ServeHTTP does.
const muxUnescaping = runtime.UnescapingModeDefault

// directCalls are a snapshot's captured routes; a route not in it is
// served by the mux.
type directCalls map[*route.Route]*directCall

// directCall is one route's handler and what decides whether the mux
// would call it for a path.
type directCall struct {
	method string
	pat    muxPattern
	h      runtime.HandlerFunc // the handler inside the middlewares (muxCapture)
	// ahead are the patterns of the method that the mux tries before
	// pat (registered after it) and that may match a path pat matches
	// (route.Disjoint): each is tried first, as ServeHTTP would.
	ahead []muxPattern
}

// muxPattern is a registered pattern with its verb's suffix, ":verb".
type muxPattern struct {
	runtime.Pattern
	suffix string
}

func newMuxPattern(p runtime.Pattern) muxPattern {
	mp := muxPattern{Pattern: p}
	if v := p.Verb(); v != "" {
		mp.suffix = ":" + v
	}
	return mp
}

// serve answers r, the forwarded request of rt, by rt's captured handler
// when the mux would call it, else through mux.
func (d directCalls) serve(mux http.Handler, w http.ResponseWriter, r *http.Request, rt *route.Route) {
	if dc := d[rt]; dc == nil || !dc.call(w, r) {
		mux.ServeHTTP(w, r)
	}
}

// call calls the handler and returns true when ServeHTTP would call it
// with the same path parameters; false means nothing was done.
func (dc *directCall) call(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != dc.method {
		return false
	}
	var buf [16]string // most paths have fewer components: no allocation
	comps, mode, ok := muxComponents(buf[:0], r.URL)
	if !ok {
		return false
	}
	for _, p := range dc.ahead {
		if _, err := p.match(comps, mode); !errors.Is(err, runtime.ErrNotMatch) && (err == nil || malformed(err)) {
			return false // the mux calls that handler, or answers 400
		}
	}
	params, err := dc.pat.match(comps, mode)
	if err != nil {
		return false
	}
	dc.h(w, r, params)
	return true
}

// malformed reports whether ServeHTTP answers err of a match with 400
// (other errors are no match).
func malformed(err error) bool {
	var mse runtime.MalformedSequenceError
	return errors.As(err, &mse)
}

// muxComponents appends the path components ServeHTTP matches to dst,
// with the unescaping mode it matches them in; false when ServeHTTP
// would not match them as strings.Split does (a path not starting with
// "/", or UnescapingModeAllCharacters, which splits at "%2F" too).
func muxComponents(dst []string, u *url.URL) ([]string, runtime.UnescapingMode, bool) {
	path, mode := u.Path, muxUnescaping
	if mode != runtime.UnescapingModeLegacy {
		if u.RawPath != "" {
			path = u.RawPath
		} else {
			mode = runtime.UnescapingModeLegacy // Path is unescaped already
		}
	}
	if !strings.HasPrefix(path, "/") || mode == runtime.UnescapingModeAllCharacters {
		return nil, mode, false
	}
	s := path[1:]
	for {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return append(dst, s), mode, true
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
}

// match is ServeHTTP's match of one handler's pattern: the verb split off
// the last component when it ends with ":verb", and a bare ":verb" not
// matching; the error is runtime.ErrNotMatch or what MatchAndEscape
// returns.
func (p muxPattern) match(comps []string, mode runtime.UnescapingMode) (map[string]string, error) {
	last := comps[len(comps)-1]
	if p.suffix == "" || !strings.HasSuffix(last, p.suffix) {
		return p.MatchAndEscape(comps, "", mode)
	}
	idx := len(last) - len(p.suffix)
	if idx == 0 {
		return nil, runtime.ErrNotMatch
	}
	var buf [16]string
	c := append(buf[:0], comps...)
	c[len(c)-1] = last[:idx]
	return p.MatchAndEscape(c, last[idx+1:], mode)
}

// muxCapture is newMux's outermost middleware: it numbers the mux's
// registrations and, for a probe (captureDirect), reports which handler
// the mux chose, with its pattern, instead of calling it.
type muxCapture struct {
	handlers []runtime.HandlerFunc // by registration number
}

// probeKey marks a probe's context; its value is the *probeResult.
type probeKey struct{}

type probeResult struct {
	reg int // registration number
	pat runtime.Pattern
	ok  bool
}

func (c *muxCapture) middleware(next runtime.HandlerFunc) runtime.HandlerFunc {
	reg := len(c.handlers)
	c.handlers = append(c.handlers, next)
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if res, ok := r.Context().Value(probeKey{}).(*probeResult); ok {
			res.reg = reg
			res.pat, res.ok = runtime.HTTPPattern(r.Context())
			return
		}
		next(w, r, params)
	}
}

// captureDirect probes mux (built with c) with a path of each route of
// routes, and returns the routes whose handler it found, with the
// patterns the mux tries before each. A probe that reaches another
// pattern than the route's own leaves the route to the mux; when the
// mux holds a handler that no route claims (the patterns it tries are
// then not all known), every route is left to it.
func captureDirect(ctx context.Context, mux http.Handler, c *muxCapture, routes []*route.Route) directCalls {
	type found struct {
		rt  *route.Route
		pat runtime.Pattern
	}
	byReg := make([]*found, len(c.handlers))
	for _, rt := range routes {
		res := &probeResult{reg: -1}
		req, err := http.NewRequestWithContext(context.WithValue(ctx, probeKey{}, res), rt.Method, probePath(rt.Pattern), nil)
		if err != nil {
			continue
		}
		mux.ServeHTTP(probeWriter{}, req)
		if res.reg < 0 || !res.ok || res.pat.String() != muxTemplate(rt.Pattern) || byReg[res.reg] != nil {
			continue
		}
		byReg[res.reg] = &found{rt, res.pat}
	}
	if slices.Contains(byReg, nil) {
		return nil
	}
	d := directCalls{}
	for reg, f := range byReg {
		dc := &directCall{method: f.rt.Method, pat: newMuxPattern(f.pat), h: c.handlers[reg]}
		for _, later := range byReg[reg+1:] {
			if later.rt.Method == f.rt.Method && !route.Disjoint(later.rt, f.rt) {
				dc.ahead = append(dc.ahead, newMuxPattern(later.pat))
			}
		}
		d[f.rt] = dc
	}
	return d
}

// probePath is a path template matches: each variable's "*" and "**"
// one component "~", which no literal of a template is
// ("/api/{name=shelves/*}:get" is "/api/shelves/~:get").
func probePath(template string) string {
	return rewriteVars(template, func(v string) string {
		sub := "*"
		if _, rhs, ok := strings.Cut(v, "="); ok {
			sub = rhs
		}
		parts := strings.Split(sub, "/")
		for i, p := range parts {
			if p == "*" || p == "**" {
				parts[i] = "~"
			}
		}
		return strings.Join(parts, "/")
	})
}

// muxTemplate is template as runtime.Pattern's String writes it: a
// variable without a pattern is "{name=*}".
func muxTemplate(template string) string {
	return rewriteVars(template, func(v string) string {
		if !strings.Contains(v, "=") {
			v += "=*"
		}
		return "{" + v + "}"
	})
}

// rewriteVars returns template with each variable, "{v}", replaced by
// f(v).
func rewriteVars(template string, f func(v string) string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(template, '{')
		end := strings.IndexByte(template, '}')
		if open < 0 || end < open {
			b.WriteString(template)
			return b.String()
		}
		b.WriteString(template[:open])
		b.WriteString(f(template[open+1 : end]))
		template = template[end+1:]
	}
}

// probeWriter discards what the mux writes for a probe that no captured
// handler took (a routing error).
type probeWriter struct{}

func (probeWriter) Header() http.Header         { return http.Header{} }
func (probeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (probeWriter) WriteHeader(int)             {}
