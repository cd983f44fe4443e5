package gateway

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/console"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// adminOpenAPI is the admin API's own OpenAPI fragment, served at
// /admin/openapi.json.
//
//go:embed admin_openapi.json
var adminOpenAPI []byte

// adminRoute is one admin endpoint: its method (GET also answers HEAD;
// several are separated by spaces, "POST DELETE") and whether it is open
// to anyone rather than only to the admin role.
type adminRoute struct {
	method string
	open   bool
	serve  func(w http.ResponseWriter, r *http.Request, sn *snapshot)
}

// allows reports whether rt answers method.
func (rt adminRoute) allows(method string) bool {
	for m := range strings.FieldsSeq(rt.method) {
		if m == method || (m == http.MethodGet && method == http.MethodHead) {
			return true
		}
	}
	return false
}

// openAdminRoute serves h to anyone, GET (and HEAD).
func openAdminRoute(h http.HandlerFunc) adminRoute {
	return adminRoute{http.MethodGet, true, func(w http.ResponseWriter, r *http.Request, _ *snapshot) { h(w, r) }}
}

// adminFeatures are the features that bring admin routes (README "Admin
// API"; admin_openapi.json): each returns its routes from a function
// beside the feature, and adminRoutes joins them, so a new endpoint is
// added where its feature lives, not in one growing map. Two features
// never claim one path (TestAdminRoutesOnce).
var adminFeatures = []func(*Server) map[string]adminRoute{
	(*Server).opsAdminRoutes,       // ops.go: /metrics, /healthz/*
	(*Server).adminAPIRoutes,       // /admin/openapi.json
	(*Server).configAdminRoutes,    // config, versions, audit, reload, rollback
	(*Server).routesAdminRoutes,    // /admin/routes
	(*Server).upstreamsAdminRoutes, // /admin/upstreams
	(*Server).limitsAdminRoutes,    // admin_limits.go: /admin/limits
	(*Server).consoleRoutes,        // admin_console.go: the console's files
	(*Server).sessionRoutes,        // console_session.go: /admin/session
	(*Server).trafficRoutes,        // admin_console.go: /admin/traffic
}

// adminRoutes is the admin API: every feature's routes.
func (s *Server) adminRoutes() map[string]adminRoute {
	routes := map[string]adminRoute{}
	for _, feature := range adminFeatures {
		maps.Copy(routes, feature(s))
	}
	return routes
}

// AdminHandler returns the admin API: /metrics, /healthz/*, the
// console's sign-in page and its files open, the console itself to a
// console session (console/doc.go; signing in, POST /admin/session, needs
// the admin role, signing out does not), everything else under /admin/
// for callers the edge's authenticator (of the live config) identifies as
// role admin. Failed authentications count
// against limits.failed_auth per client address, as on the API listener
// (429 once it is used up). Every request under /admin/ gets one access
// line, as the API's. Serve it on its own listener (Config.AdminListen),
// never on the API's.
func (s *Server) AdminHandler() http.Handler {
	routes := s.adminRoutes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sn := s.acquire()
		defer sn.release(s)
		ex := &exchange{start: time.Now(), traceID: requestTraceID(r), route: r.URL.Path, snap: sn}
		r = r.WithContext(withExchange(r.Context(), ex))
		rw := &ex.rw
		rw.ResponseWriter, rw.ex = w, ex
		if strings.HasPrefix(r.URL.Path, "/admin/") {
			defer s.logAdminAccess(rw, r, ex)
		}
		rw.Header().Set(traceHeader, ex.traceID)
		console.Headers(rw.Header())
		rt, ok := routes[r.URL.Path]
		switch {
		case !ok:
			ex.route = "unmatched"
			s.writeProblem(rw, r, problem.New(problem.CodeRouteNotFound, "No admin endpoint is at "+r.URL.EscapedPath()+"; /admin/openapi.json lists them."))
			return
		case !rt.allows(r.Method):
			p := problem.New(problem.CodeMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+".")
			p.Allow = strings.Fields(rt.method)
			s.writeProblem(rw, r, p)
			return
		}
		if !rt.open && !s.adminAuthenticate(rw, r, sn) {
			return
		}
		rt.serve(rw, r, sn)
	})
}

// adminAuthenticate admits a caller of role admin, recording its
// principal on the exchange; otherwise it answers 401 (or 429 once the
// client address has used up limits.failed_auth) or 403 and reports false.
func (s *Server) adminAuthenticate(w *responseWriter, r *http.Request, sn *snapshot) bool {
	p, err := sn.auth.Authenticate(r)
	if err != nil {
		if !s.limit(w, r, nil, p, err) {
			s.refuseAuth(w, r, authProblem(err))
		}
		return false
	}
	w.ex.principal = p
	if !p.HasRole(callmeta.RoleAdmin) {
		s.refuseAuth(w, r, problem.New(problem.CodeForbidden, "The admin API needs the admin role; the caller's roles ("+strings.Join(p.Roles, ", ")+") do not include it."))
		return false
	}
	return true
}

// logAdminAccess writes the access line of an admin request, in the API's
// format (logAccess: never a header, so never the token).
func (s *Server) logAdminAccess(w *responseWriter, r *http.Request, ex *exchange) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	s.logAccess(r, ex, status, time.Since(ex.start))
}

// ServeAdmin serves AdminHandler on lis until ctx ends, then closes it at
// once: the admin API has no clients to drain for.
func (s *Server) ServeAdmin(ctx context.Context, lis net.Listener) error {
	hs := &http.Server{
		Handler:           s.adminHandler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(lis) }()
	s.log.Info("admin API serving", "addr", lis.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("gateway: admin: %w", err)
	case <-ctx.Done():
	}
	_ = hs.Close()
	<-errc
	return nil
}

// adminAPIRoutes serves the admin API's own description, to anyone.
func (s *Server) adminAPIRoutes() map[string]adminRoute {
	return map[string]adminRoute{"/admin/openapi.json": {http.MethodGet, true, serveAdminOpenAPI}}
}

func serveAdminOpenAPI(w http.ResponseWriter, _ *http.Request, _ *snapshot) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(adminOpenAPI)
}

// configAdminRoutes are the config's versions: the live one, those kept,
// the audit, and the reload and rollback that change them.
func (s *Server) configAdminRoutes() map[string]adminRoute {
	return map[string]adminRoute{
		"/admin/config":   {http.MethodGet, false, s.adminConfig},
		"/admin/versions": {http.MethodGet, false, s.adminVersions},
		"/admin/audit":    {http.MethodGet, false, s.adminAudit},
		"/admin/reload":   {http.MethodPost, false, s.adminReload},
		"/admin/rollback": {http.MethodPost, false, s.adminRollback},
	}
}

func (s *Server) adminConfig(w http.ResponseWriter, _ *http.Request, sn *snapshot) {
	writeJSON(w, http.StatusOK, map[string]any{"version": sn.version, "config": config.Redacted(sn.cfg)})
}

func (s *Server) adminVersions(w http.ResponseWriter, _ *http.Request, sn *snapshot) {
	writeJSON(w, http.StatusOK, map[string]any{"live": sn.version, "versions": s.Versions()})
}

func (s *Server) adminAudit(w http.ResponseWriter, _ *http.Request, _ *snapshot) {
	writeJSON(w, http.StatusOK, map[string]any{"audit": s.Audit()})
}

// routesAdminRoutes lists the live route table.
func (s *Server) routesAdminRoutes() map[string]adminRoute {
	return map[string]adminRoute{"/admin/routes": {http.MethodGet, false, s.adminRoutesList}}
}

func (s *Server) adminRoutesList(w http.ResponseWriter, _ *http.Request, sn *snapshot) {
	writeJSON(w, http.StatusOK, map[string]any{"version": sn.version.ID, "routes": routeInfos(sn.cfg, sn.table.Routes(), sn.endpoints, sn.policy)})
}

// UpstreamInfo is one upstream on /admin/upstreams: its settings, what
// /health says of it, each instance with its own health, ejection and
// calls in flight, and its chain's live state (instances with their
// ejection, calls in flight, each breaker's state and counts).
type UpstreamInfo struct {
	Name      string              `json:"name"`
	Addresses []string            `json:"addresses"`
	Timeout   string              `json:"timeout"`
	Health    string              `json:"health"` // grpc.health.v1 over /health's own connection: UP or DOWN
	Required  bool                `json:"requiredForReadiness"`
	Instances []InstanceInfo      `json:"instances"`
	Chain     *interceptors.State `json:"chain,omitempty"` // nil without WithUpstreams
}

// upstreamsAdminRoutes shows each upstream with its instances and chain.
func (s *Server) upstreamsAdminRoutes() map[string]adminRoute {
	return map[string]adminRoute{"/admin/upstreams": {http.MethodGet, false, s.adminUpstreams}}
}

func (s *Server) adminUpstreams(w http.ResponseWriter, r *http.Request, sn *snapshot) {
	out := make([]UpstreamInfo, 0, len(sn.cfg.Upstreams))
	chains := make([]*interceptors.State, len(sn.cfg.Upstreams))
	for i, u := range sn.cfg.Upstreams {
		info := UpstreamInfo{Name: u.Name, Addresses: u.Addresses, Timeout: u.Timeout.String(),
			Required: slices.Contains(sn.cfg.Ops.ReadyRequires, u.Name)}
		if s.o.upstreams != nil {
			if up := s.o.upstreams.lookup(sn.upstreams[u.Name].cc); up != nil {
				st := up.State()
				info.Chain, chains[i] = &st, &st
			}
		}
		out = append(out, info)
	}
	// The upstreams' and the instances' checks run at once: the answer
	// takes one health timeout at most.
	var insts [][]InstanceInfo
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		insts = s.instanceInfos(r.Context(), sn, chains)
	}()
	rep := sn.health.Check(r.Context())
	<-checked
	status := map[string]string{}
	for _, d := range rep.Dependencies {
		status[d.Name] = d.Status
	}
	for i := range out {
		out[i].Health, out[i].Instances = status[out[i].Name], insts[i]
	}
	writeJSON(w, http.StatusOK, map[string]any{"version": sn.version.ID, "upstreams": out})
}

// adminReload re-reads the config file; 200 with the ReloadResult, or a
// FAILED_PRECONDITION problem saying why the file was rejected (the
// running config stays).
func (s *Server) adminReload(w http.ResponseWriter, r *http.Request, _ *snapshot) {
	res, err := s.ReloadFile(r.Context(), SourceAdmin)
	if err != nil {
		s.writeProblem(w, r, problem.New(problem.CodeFailedPrecondition, "The config was not applied; the running one stays: "+err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// adminRollback applies ?version=ID, or without the parameter the version
// before the live one. An empty or repeated version is a 400: "?version="
// must not mean "the previous one".
func (s *Server) adminRollback(w http.ResponseWriter, r *http.Request, _ *snapshot) {
	ids, given := r.URL.Query()["version"]
	if given && (len(ids) != 1 || ids[0] == "") {
		s.writeProblem(w, r, problem.New(problem.CodeInvalidArgument,
			"version must be one kept version ID (GET /admin/versions lists them); leave the parameter out to roll back to the previous version."))
		return
	}
	var id string
	if given {
		id = ids[0]
	}
	res, err := s.Rollback(r.Context(), id)
	switch {
	case errors.Is(err, ErrUnknownVersion):
		if len(id) > 64 { // a version id is a short hash: echo no more of anything else
			id = id[:64] + "..."
		}
		s.writeProblem(w, r, problem.New(problem.CodeNotFound, "No kept config version "+fmt.Sprintf("%q", id)+"; GET /admin/versions lists them."))
	case err != nil:
		s.writeProblem(w, r, problem.New(problem.CodeFailedPrecondition, "The rollback was not applied: "+err.Error()))
	default:
		writeJSON(w, http.StatusOK, res)
	}
}
