package gateway

import (
	"crypto/tls"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/portico-gateway/portico/internal/tlsconfig"
)

// TLSConfig terminates TLS at the edge. Empty means plaintext HTTP. With a
// pair the edge serves HTTPS only, TLS 1.2 or later with forward-secret
// AEAD suites, HTTP/2 by ALPN and HTTP/1.1. Every handshake takes the
// settings of the config live at that moment, so a reload that adds,
// changes or removes this section applies to the next connection, and
// connections already open keep theirs. The pair is also re-read when its
// files change (checked at most once a second) and on SIGHUP, so a renewed
// certificate needs no config change.
type TLSConfig struct {
	// CertFile is the PEM certificate chain. Required with KeyFile.
	CertFile string `yaml:"cert_file,omitempty"`
	// KeyFile is its PEM private key. Keep it private.
	KeyFile string `yaml:"key_file,omitempty"`
	// ClientCAFile, when set, holds the PEM CAs that must sign a client
	// certificate on every connection (mTLS); re-read on SIGHUP. Empty
	// means no client certificate is asked for. Needs the pair.
	ClientCAFile string `yaml:"client_ca_file,omitempty"`
}

// UpstreamTLSConfig dials one upstream over TLS (or mTLS). Empty means
// plaintext gRPC, as before.
type UpstreamTLSConfig struct {
	// Enabled turns TLS on with the system's CAs; setting CAFile or a
	// client pair turns it on too.
	Enabled bool `yaml:"enabled,omitempty"`
	// CAFile holds the PEM CAs that sign the upstream's certificate.
	// Empty means the system roots.
	CAFile string `yaml:"ca_file,omitempty"`
	// CertFile and KeyFile are the edge's client pair, for an upstream that
	// requires client certificates (mTLS). Both or neither; re-read when
	// they change.
	CertFile string `yaml:"cert_file,omitempty"`
	KeyFile  string `yaml:"key_file,omitempty"`
	// ServerName is the name checked in the upstream's certificate. Empty
	// means the host dialled.
	ServerName string `yaml:"server_name,omitempty"`
}

// On reports whether the edge serves TLS.
func (c TLSConfig) On() bool { return c.CertFile != "" || c.KeyFile != "" || c.ClientCAFile != "" }

func (c TLSConfig) validate(v *validator) {
	if !c.On() {
		return
	}
	_, _, err := tlsconfig.Server(c.CertFile, c.KeyFile, c.ClientCAFile)
	for _, e := range unjoin(err) { // the pair's and the client CA's, each on its line
		v.add("tls", "%v", e)
	}
}

// On reports whether the upstream is dialled over TLS.
func (c UpstreamTLSConfig) On() bool {
	return c.Enabled || c.CAFile != "" || c.CertFile != "" || c.KeyFile != ""
}

// dialOptions returns the transport credentials for the upstream, none
// for plaintext (the dialers' default).
func (c UpstreamTLSConfig) dialOptions() ([]grpc.DialOption, error) {
	if !c.On() {
		return nil, nil
	}
	cfg, err := tlsconfig.Client(c.CAFile, c.CertFile, c.KeyFile, c.ServerName)
	if err != nil {
		return nil, err
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(cfg))}, nil
}

func (c Config) validateUpstreamTLS(v *validator) {
	for i, u := range c.Upstreams {
		_, err := u.TLS.dialOptions()
		for _, e := range unjoin(err) {
			v.add("upstreams["+strconv.Itoa(i)+"].tls", "%v", e)
		}
	}
}

// edgeTLS is one snapshot's TLS settings: the server config each new
// connection handshakes with. A snapshot whose tls section is unchanged
// shares its predecessor's, so SIGHUP's re-read (ReloadTLS) carries over.
type edgeTLS struct {
	c   TLSConfig
	cur atomic.Pointer[tls.Config]
	log *slog.Logger
}

// buildTLS loads the edge's pair (and client CAs); nil without a tls
// section.
func buildTLS(c TLSConfig, l *slog.Logger) (*edgeTLS, error) {
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
func (s *Server) tlsFor(cfg Config, prev *snapshot) (*edgeTLS, error) {
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
