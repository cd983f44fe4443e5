package gateway

import (
	"crypto/tls"
	"log/slog"
	"net"
	"sync/atomic"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/internal/tlsconfig"
)

// edgeTLS is one snapshot's TLS settings: the server config each new
// connection handshakes with. A snapshot whose tls section is unchanged
// shares its predecessor's, so SIGHUP's re-read (ReloadTLS) carries over.
type edgeTLS struct {
	c   config.TLSConfig
	cur atomic.Pointer[tls.Config]
	log *slog.Logger
}

// buildTLS loads the edge's pair (and client CAs); nil without a tls
// section.
func buildTLS(c config.TLSConfig, l *slog.Logger) (*edgeTLS, error) {
	if !c.On() {
		return nil, nil
	}
	t := &edgeTLS{c: c, log: l}
	return t, t.load()
}

// load reads the files again and makes them the config of new
// handshakes; on error the running config stays.
func (t *edgeTLS) load() error {
	cfg, cert, err := tlsconfig.Server(t.c.CertFile, t.c.KeyFile, t.c.ClientCAFile)
	if err != nil {
		return err
	}
	cert.Failed = func(err error) {
		t.log.Warn("TLS certificate not reloaded; keeping the running one", "err", err.Error())
	}
	// Serve hands net/http *tls.Conns, so ALPN is set here: HTTP/2 first.
	cfg.NextProtos = []string{"h2", "http/1.1"}
	t.cur.Store(cfg)
	return nil
}

// tlsFor returns prev's TLS settings when cfg's tls section is the same,
// else new ones (nil without a section).
func (s *Server) tlsFor(cfg config.Config, prev *snapshot) (*edgeTLS, error) {
	if prev != nil && prev.cfg.TLS == cfg.TLS {
		return prev.tls, nil
	}
	return buildTLS(cfg.TLS, s.log)
}

// wrapTLS makes c a TLS server connection when the live config has a tls
// section: its handshake (run by net/http) uses the settings live now.
func (s *Server) wrapTLS(c net.Conn) net.Conn {
	if t := s.snap.Load().tls; t != nil {
		return tls.Server(c, t.cur.Load())
	}
	return c
}

// ReloadTLS re-reads the live config's certificate pair and client CAs
// now (SIGHUP); on error the running ones stay. A no-op without a tls
// section.
func (s *Server) ReloadTLS() error {
	if t := s.snap.Load().tls; t != nil {
		return t.load()
	}
	return nil
}
