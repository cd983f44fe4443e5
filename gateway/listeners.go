package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
)

// The edge's two addresses (listen, admin_listen) and the HTTP servers on
// them follow reloads like every other setting:
//
//   - each address is a front: its net.Listener and one accept loop, which
//     hands each connection (TLS per the config live at that moment,
//     config_tls.go; a cleartext one wrapped so that net/http's own
//     plain-text answers become problems, malformed.go) to the front's
//     current generation;
//   - a generation is one http.Server with one config's http section (the
//     read, header and idle timeouts and the header limit), serving the
//     connections handed to it;
//   - a reload that changes the http section starts a new generation on the
//     same front and retires the old one; a reload that changes an address
//     opens the new listener before anything is swapped (when it cannot
//     bind, the reload is rejected and nothing changes), starts a front on
//     it and retires the old front: its listener closes at once, so the old
//     address refuses new connections, and its generations are retired;
//   - a retired generation gets no new connection. The requests it serves
//     finish on its settings; every answer it starts afterwards carries
//     Connection: close (HTTP/2: GOAWAY), so a keep-alive client moves to
//     the new listener and settings after its current request. A connection
//     idle at the swap is not closed under the client, which could be
//     sending on it: it stays until its next request is answered or the old
//     idle_timeout closes it. A generation ends with its last connection;
//   - shutdown (shutdown.go) stops the API's fronts and shuts down all its
//     generations, retired ones included, then the admin API's.
//
// The admin API's generations keep fixed limits (adminHTTP): it serves
// operators, not clients the http section is tuned for. The API's
// connections, across its fronts and generations, are capped by
// http.max_connections (connlimit.go); the admin API's are not.

// adminHTTP is the admin API's HTTP limits.
var adminHTTP = config.HTTPConfig{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: config.DefaultIdleTimeout}

// listeners is the edge's fronts while it serves.
type listeners struct {
	mu         sync.Mutex // one reconfiguration (or the shutdown) at a time
	stopped    bool       // shutdown has begun: addresses no longer follow reloads
	api, admin *front     // admin is nil without admin_listen

	gmu  sync.Mutex
	gens map[*generation]bool // live generations (value: admin), for shutdown

	wg     sync.WaitGroup // accept loops and generations' Serve
	failed chan error     // the API listener broke (not closed by the edge)
}

// front is one address the edge serves.
type front struct {
	admin bool
	addr  string // as configured
	ln    net.Listener
	cur   atomic.Pointer[generation]
	done  chan struct{} // the accept loop returned
	quit  chan struct{} // closed with ln: the accept loop stops waiting for room
	once  sync.Once
}

// generation is one http.Server of a front, with one config's limits.
type generation struct {
	hs      *http.Server
	lis     *handoff
	limits  config.HTTPConfig
	retired atomic.Bool
	mu      sync.Mutex
	conns   int  // open connections (ConnState), under mu
	served  bool // Serve returned: every connection it accepted is counted; under mu
}

// startListeners starts serving the API on lis and, when the live config
// sets admin_listen, the admin API on a listener it opens. Called once,
// by Serve, under reloadMu.
func (s *Server) startListeners(lis net.Listener) error {
	cfg := s.snap.Load().cfg
	ls := &listeners{gens: map[*generation]bool{}, failed: make(chan error, 1)}
	var adminLn net.Listener
	if cfg.AdminListen != "" {
		var err error
		if adminLn, err = net.Listen("tcp", cfg.AdminListen); err != nil {
			return err
		}
	}
	s.conns.setMax(connCap(cfg.HTTP.MaxConnections))
	ls.api = s.startFront(ls, lis, cfg.Listen, false, cfg.HTTP)
	if adminLn != nil {
		ls.admin = s.startFront(ls, adminLn, cfg.AdminListen, true, adminHTTP)
		s.log.Info("admin API serving", "addr", adminLn.Addr().String())
	}
	s.lis = ls
	return nil
}

// startFront serves ln with a first generation of limits.
func (s *Server) startFront(ls *listeners, ln net.Listener, addr string, admin bool, limits config.HTTPConfig) *front {
	f := &front{admin: admin, addr: addr, ln: ln, done: make(chan struct{}), quit: make(chan struct{})}
	f.cur.Store(s.startGeneration(ls, f, limits))
	ls.wg.Go(func() { s.accept(ls, f) })
	return f
}

// headerSlack is how far past http.max_header_bytes net/http still reads a
// request's headers, so the handler answers the 431 problem (with its code
// and X-Trace-Id) instead of net/http's own plain text: an oversized token
// (120 KB against the default 64 KiB) gets a problem like every other bad
// credential. It bounds what one connection may hold while its headers
// arrive to the limit plus 256 KiB (net/http's default is 1 MiB).
const headerSlack = 256 << 10

// headerReadLimit is the http.Server.MaxHeaderBytes for a configured
// http.max_header_bytes limit.
func headerReadLimit(limit int) int { return limit + headerSlack }

// serverLimits is the part of an http section a generation's http.Server
// applies: max_connections is the listeners' (connlimit.go), so a reload
// changing only it starts no generation.
func serverLimits(h config.HTTPConfig) config.HTTPConfig {
	h.MaxConnections = 0
	return h
}

// startGeneration starts an http.Server with limits for f's connections.
func (s *Server) startGeneration(ls *listeners, f *front, limits config.HTTPConfig) *generation {
	g := &generation{lis: newHandoff(f.ln.Addr()), limits: serverLimits(limits)}
	h := s.handler
	if f.admin {
		h = s.adminHandler
	}
	g.hs = &http.Server{
		Handler:           g.wrap(h),
		ReadHeaderTimeout: limits.ReadHeaderTimeout,
		ReadTimeout:       limits.ReadTimeout,
		IdleTimeout:       limits.IdleTimeout,
		MaxHeaderBytes:    headerReadLimit(limits.MaxHeaderBytes), // the handler enforces the configured limit exactly (headerSize)
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ConnState: func(c net.Conn, st http.ConnState) {
			g.track(ls, st)
			if !f.admin {
				s.conns.track(c, st)
			}
		},
		// "OPTIONS *" reaches the edge too, so its answer has an X-Trace-Id.
		DisableGeneralOptionsHandler: true,
	}
	ls.gmu.Lock()
	ls.gens[g] = f.admin
	ls.gmu.Unlock()
	// TLSConfig is nil, so Serve sets up HTTP/2 for the *tls.Conns the
	// front hands over (their ALPN offers h2, config_tls.go).
	ls.wg.Go(func() {
		_ = g.hs.Serve(g.lis)
		g.update(ls, func() { g.served = true })
	})
	return g
}

// wrap marks every answer of a retired generation Connection: close.
func (g *generation) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.retired.Load() {
			closeAfter(w)
		}
		h.ServeHTTP(w, r)
	})
}

// track counts g's connections.
func (g *generation) track(ls *listeners, st http.ConnState) {
	g.update(ls, func() {
		switch st {
		case http.StateNew:
			g.conns++
		case http.StateClosed, http.StateHijacked:
			g.conns--
		}
	})
}

// retire stops handing g connections (its Serve returns; the connections
// keep being served). It ends with its last connection.
func (g *generation) retire(ls *listeners) {
	g.update(ls, func() { g.retired.Store(true) })
	_ = g.lis.Close()
}

// update changes g's state with change, under g.mu, and forgets g once
// it is retired, its Serve returned and its last connection closed.
func (g *generation) update(ls *listeners, change func()) {
	g.mu.Lock()
	change()
	done := g.retired.Load() && g.served && g.conns == 0
	g.mu.Unlock()
	if done {
		ls.forget(g)
	}
}

func (ls *listeners) forget(g *generation) {
	ls.gmu.Lock()
	delete(ls.gens, g)
	ls.gmu.Unlock()
}

// accept hands each connection of f's listener to its current
// generation until the listener closes; the API's within
// http.max_connections (connlimit.go).
func (s *Server) accept(ls *listeners, f *front) {
	defer close(f.done)
	var delay time.Duration
	for {
		if !f.admin && !s.conns.await(f.quit) {
			return
		}
		c, err := f.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if t, ok := err.(interface{ Temporary() bool }); !ok || !t.Temporary() {
				if !f.admin {
					select {
					case ls.failed <- err:
					default:
					}
				}
				s.log.Error("listener failed", "addr", f.ln.Addr().String(), "err", err.Error())
				return
			}
			// As net/http: out of descriptors and the like pass.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed; retrying", "err", err.Error(), "delay", delay.String())
			time.Sleep(delay)
			continue
		}
		delay = 0
		if f.admin {
			f.hand(s.wrapMalformed(c, true)) // malformed.go
			continue
		}
		room, ok := s.conns.admit(f.quit)
		for _, idle := range room {
			// Its own goroutine: a TLS close_notify to a peer that does not
			// read may wait seconds, and accepting must not.
			ls.wg.Go(func() { _ = idle.Close() })
		}
		if !ok {
			_ = c.Close()
			return
		}
		if !f.hand(s.wrapMalformed(s.wrapTLS(c), false)) {
			s.conns.release()
		}
	}
}

// hand gives c to f's current generation; a generation retired meanwhile
// passes it to the next. Only a retired front, whose listener closed
// first, could leave c without one; it cannot happen, but c is closed
// then rather than leaked, and false returned.
func (f *front) hand(c net.Conn) bool {
	for {
		g := f.cur.Load()
		if g.lis.give(c) {
			return true
		}
		if f.cur.Load() == g {
			_ = c.Close()
			return false
		}
	}
}

// close closes f's listener: its address refuses new connections and its
// accept loop returns.
func (f *front) close() {
	f.once.Do(func() { close(f.quit) })
	_ = f.ln.Close()
}

// listenChange is what a reload needs from the listeners: the listeners
// opened for changed addresses (prepared before the swap, so a bind
// failure rejects the reload) and whether the API's limits changed.
type listenChange struct {
	ls         *listeners
	api, admin net.Listener // nil: address unchanged (or admin off)
	adminOff   bool         // admin_listen became ""
	limits     bool         // the http section changed
}

// prepareListeners opens the listeners next needs that the edge does not
// have; on error it closes what it opened. Called under reloadMu; a no-op
// before Serve and after shutdown began.
func (s *Server) prepareListeners(next config.Config) (*listenChange, error) {
	ls := s.lis
	if ls == nil {
		return nil, nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.stopped {
		return nil, nil
	}
	// A changed tls section retires the generation like changed limits: a
	// connection open from before (say plaintext, now that TLS is on) gets
	// Connection: close on its next answer and reconnects under the new
	// settings, instead of keeping the old ones for as long as it lives.
	ch := &listenChange{ls: ls, limits: ls.api.cur.Load().limits != serverLimits(next.HTTP) ||
		!reflect.DeepEqual(s.snap.Load().cfg.TLS, next.TLS)}
	var err error
	if next.Listen != ls.api.addr {
		if ch.api, err = net.Listen("tcp", next.Listen); err != nil {
			return nil, err
		}
	}
	switch {
	case next.AdminListen == "":
		ch.adminOff = ls.admin != nil
	case ls.admin == nil || next.AdminListen != ls.admin.addr:
		if ch.admin, err = net.Listen("tcp", next.AdminListen); err != nil {
			ch.abort()
			return nil, err
		}
	}
	return ch, nil
}

// abort closes the listeners a rejected reload opened.
func (ch *listenChange) abort() {
	if ch == nil {
		return
	}
	for _, ln := range []net.Listener{ch.api, ch.admin} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// apply makes the listeners serve cfg (just committed): new fronts on
// the opened listeners, a new generation for new limits, and the old ones
// retired. After shutdown began it only closes what was opened.
func (s *Server) applyListeners(ch *listenChange, cfg config.Config) {
	if ch == nil {
		return
	}
	ls := ch.ls
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.stopped {
		ch.abort()
		return
	}
	// Recomputed on every reload: the open-file limit may have changed.
	s.conns.setMax(connCap(cfg.HTTP.MaxConnections))
	switch {
	case ch.api != nil:
		old := ls.api
		ls.api = s.startFront(ls, ch.api, cfg.Listen, false, cfg.HTTP)
		s.retireFront(ls, old)
		s.log.Info("serving", "addr", ch.api.Addr().String(), "previous", old.ln.Addr().String())
	case ch.limits:
		old := ls.api.cur.Load()
		ls.api.cur.Store(s.startGeneration(ls, ls.api, cfg.HTTP))
		old.retire(ls)
	}
	switch {
	case ch.admin != nil:
		old := ls.admin
		ls.admin = s.startFront(ls, ch.admin, cfg.AdminListen, true, adminHTTP)
		s.retireFront(ls, old)
		s.log.Info("admin API serving", "addr", ch.admin.Addr().String())
	case ch.adminOff:
		s.retireFront(ls, ls.admin)
		ls.admin = nil
		s.log.Info("admin API stopped")
	}
}

// retireFront closes f's listener (its address refuses from now on),
// waits for the accept loop to hand over what it accepted, and retires
// its generation. nil is a no-op.
func (s *Server) retireFront(ls *listeners, f *front) {
	if f == nil {
		return
	}
	f.close()
	<-f.done
	f.cur.Load().retire(ls)
}

// stop begins the shutdown: addresses no longer follow reloads, and the
// API's listener closes (new connections are refused). It returns the
// generations to shut down, the API's and the admin API's.
func (ls *listeners) stopAPI() (api []*generation) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.stopped = true
	ls.api.close()
	<-ls.api.done
	return ls.generations(false)
}

// stopAdmin closes the admin API's listener, if any, and returns its
// generations.
func (ls *listeners) stopAdmin() []*generation {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.admin != nil {
		ls.admin.close()
		<-ls.admin.done
	}
	return ls.generations(true)
}

// generations lists the live generations of the API or the admin API.
func (ls *listeners) generations(admin bool) []*generation {
	ls.gmu.Lock()
	defer ls.gmu.Unlock()
	var out []*generation
	for g, a := range ls.gens {
		if a == admin {
			out = append(out, g)
		}
	}
	return out
}

// shutdownAll shuts gens down together within ctx: idle connections
// close, in-flight requests finish; when ctx ends first the rest are cut
// and false is returned.
func shutdownAll(ctx context.Context, gens []*generation) bool {
	var wg sync.WaitGroup
	var cut atomic.Bool
	for _, g := range gens {
		wg.Go(func() {
			if err := g.hs.Shutdown(ctx); err != nil {
				cut.Store(true)
				_ = g.hs.Close()
			}
		})
	}
	wg.Wait()
	return !cut.Load()
}
